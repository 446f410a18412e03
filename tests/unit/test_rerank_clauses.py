"""Per-clause reranking: the AND rules, degradation of a failing clause, the option's choices,
and the same reranker running under dataset rounds and the reranking stage."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from thalabus_graph.errors import ConfigurationError, ServiceTimeout
from thalabus_graph.rerank import (
    Hit,
    NoReranking,
    Passage,
    RerankFailure,
    RerankingRetriever,
    RerankReply,
    RetrievalResult,
    TopK,
)
from thalabus_graph.rerank.clauses import (
    CLAUSE_MODES,
    PerClauseReranker,
    check_mode,
    clause_reranker,
    combined_on_scale,
)
from thalabus_graph.rerank.rounds import rerank_in_rounds_sync
from thalabus_graph.settings import Settings

# clause -> passage id -> score: "both" has moderate evidence for each clause, "cat" and "dog"
# each match one clause strongly and the other not at all, "none" matches neither.
SCORES: dict[str, dict[str, float]] = {
    "red cat": {"both": 0.6, "cat": 0.9, "dog": 0.1, "none": 0.05},
    "big dog": {"both": 0.6, "cat": 0.1, "dog": 0.9, "none": 0.05},
    "red cat AND big dog": {"both": 0.5, "cat": 0.55, "dog": 0.55, "none": 0.05},
}
PASSAGES = [Passage(i, f"text of {i}", 0.5) for i in ("both", "cat", "dog", "none")]


class ByClause:
    """Answers from ``SCORES`` per query; ``missing`` leaves ids unscored for one clause,
    ``failing`` makes one clause's call raise, ``broken`` makes it a misconfiguration."""

    def __init__(self, *, missing: Mapping[str, set[str]] | None = None,
                 failing: str | None = None, broken: str | None = None) -> None:
        self.missing = dict(missing or {})
        self.failing = failing
        self.broken = broken
        self.asked: list[str] = []

    @property
    def available(self) -> bool:
        return True

    async def score(self, query: str, passages: Sequence[Passage]) -> RerankReply:
        self.asked.append(query)
        if query == self.broken:
            raise ConfigurationError("model misconfigured")
        if query == self.failing:
            raise ServiceTimeout("clause timed out")
        gone = self.missing.get(query, set())
        failures = (RerankFailure(tuple(sorted(gone)), ServiceTimeout("batch")),) if gone else ()
        return RerankReply({p.fragmentid: SCORES[query][p.fragmentid] for p in passages
                            if p.fragmentid not in gone}, failures, usage={"requests": 1})


def scored(reranker: Any, query: str = "red cat AND big dog") -> RerankReply:
    reply: RerankReply = asyncio.run(reranker.score(query, PASSAGES))
    return reply


def order(scores: Mapping[str, float]) -> list[str]:
    return sorted(scores, key=lambda i: (-scores[i], i))


@pytest.mark.parametrize("rule", ["geometric", "minimum"])
def test_each_clause_is_asked_and_joint_evidence_ranks_first(rule: str) -> None:
    inner = ByClause()
    reply = scored(PerClauseReranker(inner, ("red cat", "big dog"), rule))
    assert sorted(inner.asked) == ["big dog", "red cat"]  # never the joined text
    assert order(reply.scores)[0] == "both"
    assert reply.scores["none"] == min(reply.scores.values())
    assert reply.usage == {"requests": 2}
    # the joined query, on the same reranker, puts a one-clause passage first
    assert order(scored(inner).scores)[0] in {"cat", "dog"}


def test_a_one_clause_match_never_wins_as_a_maximum_would() -> None:
    for rule in ("geometric", "minimum"):
        reply = scored(PerClauseReranker(ByClause(), ("red cat", "big dog"), rule))
        assert reply.scores["both"] > reply.scores["cat"]
        assert reply.scores["both"] > reply.scores["dog"]


def test_combined_scores_stay_on_the_rerankers_scale() -> None:
    reply = scored(PerClauseReranker(ByClause(), ("red cat", "big dog"), "geometric"))
    given = [v for c in ("red cat", "big dog") for v in SCORES[c].values()]
    assert all(min(given) <= v <= max(given) for v in reply.scores.values())
    assert combined_on_scale([{"a": 0.02, "b": 0.06}, {"a": 0.06, "b": 0.02}],
                             "geometric") == {"a": 0.02, "b": 0.02}
    assert combined_on_scale([{"a": 1.0}, {}], "minimum") == {}


def test_an_id_a_clause_could_not_score_is_unscored_and_its_failure_reported() -> None:
    inner = ByClause(missing={"big dog": {"cat"}})
    reply = scored(PerClauseReranker(inner, ("red cat", "big dog"), "minimum"))
    assert "cat" not in reply.scores and set(reply.scores) == {"both", "dog", "none"}
    assert [f.passage_ids for f in reply.failures] == [("cat",)]


def test_a_failing_clause_call_leaves_every_passage_unscored_without_raising() -> None:
    reply = scored(PerClauseReranker(ByClause(failing="big dog"), ("red cat", "big dog"),
                                     "geometric"))
    assert reply.scores == {}
    assert len(reply.failures) == 1
    assert set(reply.failures[0].passage_ids) == {p.fragmentid for p in PASSAGES}
    assert reply.failure_kind() == "timeout"


def test_a_misconfigured_clause_call_raises() -> None:
    with pytest.raises(ConfigurationError, match="misconfigured"):
        scored(PerClauseReranker(ByClause(broken="red cat"), ("red cat", "big dog"), "minimum"))


def test_modes_are_checked_and_trivial_cases_keep_the_reranker() -> None:
    assert CLAUSE_MODES == ("joined", "geometric", "minimum")
    assert check_mode("geometric") == "geometric"
    with pytest.raises(ConfigurationError, match="joined, geometric, minimum"):
        check_mode("max")
    inner = ByClause()
    assert clause_reranker(inner, ["red cat", "big dog"], "joined") is inner
    assert clause_reranker(inner, ["red cat"], "geometric") is inner
    none = NoReranking()
    assert clause_reranker(none, ["red cat", "big dog"], "minimum") is none
    assert isinstance(clause_reranker(inner, ["red cat", "big dog"], "minimum"),
                      PerClauseReranker)
    with pytest.raises(ConfigurationError):
        clause_reranker(inner, ["red cat", "big dog"], "max")
    with pytest.raises(ConfigurationError):
        PerClauseReranker(inner, ("red cat",), "geometric")
    with pytest.raises(ConfigurationError):
        PerClauseReranker(inner, ("red cat", "big dog"), "joined")


def test_the_setting_takes_the_choices_from_the_environment() -> None:
    for mode in CLAUSE_MODES:
        assert Settings.from_env({"THALABUS_RERANK_CLAUSES": mode}).rerank_clauses == mode
    with pytest.raises(ConfigurationError, match="rerank_clauses must be one of"):
        Settings.from_env({"THALABUS_RERANK_CLAUSES": "max"})


def test_in_rounds_a_partly_failing_clause_is_a_partial_rerank() -> None:
    reranker = PerClauseReranker(ByClause(missing={"red cat": {"dog"}}),
                                 ("red cat", "big dog"), "geometric")
    result = rerank_in_rounds_sync([PASSAGES[:2], PASSAGES[2:]], "red cat AND big dog",
                                   reranker, TopK(10))
    assert result.reranked and result.reason == "partial"
    assert result.unscored_ids == ("dog",)
    assert [f.fragmentid for f in result.fragments][-1] == "dog"


def test_in_rounds_a_failed_clause_keeps_the_order() -> None:
    reranker = PerClauseReranker(ByClause(failing="red cat"), ("red cat", "big dog"),
                                 "minimum")
    result = rerank_in_rounds_sync([PASSAGES], "red cat AND big dog", reranker, TopK(10))
    assert not result.reranked and result.reason == "failed"
    assert [f.fragmentid for f in result.fragments] == [p.fragmentid for p in PASSAGES]


class PlainInner:
    """A fixed retriever whose rerank query is the query itself; it lists no clauses."""

    hits = tuple(Hit(p.fragmentid, text=p.text, score=s)
                 for p, s in zip(PASSAGES, (0.9, 0.8, 0.7, 0.6), strict=True))

    async def retrieve(self, query: str, *, scope: Any = None, k: int = 10) -> RetrievalResult:
        return RetrievalResult(self.hits[:k])

    def rerank_query(self, query: str) -> str:
        return query


class ClauseInner(PlainInner):
    """The same hits; its clauses are the query split on " AND " (for the test)."""

    def rerank_clauses(self, query: str) -> list[str]:
        return query.split(" AND ")


def stage_run(inner: Any, reranker: Any, clauses: str) -> RetrievalResult:
    stage = RerankingRetriever(inner, reranker, candidates=4, top_n=4, clauses=clauses)
    result: RetrievalResult = asyncio.run(stage.retrieve("red cat AND big dog", k=4))
    return result


def test_the_stage_reranks_per_clause_and_says_so() -> None:
    joined = stage_run(ClauseInner(), ByClause(), "joined")
    assert joined.clauses == "joined" and joined.hits[0].chunk_id in {"cat", "dog"}
    for rule in ("geometric", "minimum"):
        result = stage_run(ClauseInner(), ByClause(), rule)
        assert result.reranked and result.clauses == rule
        assert result.hits[0].chunk_id == "both"
        assert result.hits[0].score == 0.9  # fusion's score is kept beside the rerank score


def test_the_stage_degrades_on_a_failing_clause_and_refuses_an_unknown_mode() -> None:
    result = stage_run(ClauseInner(), ByClause(failing="big dog"), "geometric")
    assert not result.reranked and result.degraded_reason == "timeout"
    assert [h.chunk_id for h in result.hits] == [h.chunk_id for h in ClauseInner.hits]
    with pytest.raises(ConfigurationError, match="rerank clauses must be one of"):
        RerankingRetriever(ClauseInner(), ByClause(), clauses="max")


def test_the_stage_asks_one_query_when_the_inner_retriever_lists_no_clauses() -> None:
    inner = ByClause()
    result = stage_run(PlainInner(), inner, "minimum")
    assert result.clauses == "joined" and inner.asked == ["red cat AND big dog"]


def test_the_cli_option_offers_the_modes_and_refuses_others_before_connecting(
        capsys: pytest.CaptureFixture[str]) -> None:
    from thalabus_graph.cli import build_parser

    parser = build_parser()
    for mode in CLAUSE_MODES:
        args = parser.parse_args(["rerank", "s#dataset_1", "--clauses", mode])
        assert args.clauses == mode
    assert parser.parse_args(["rerank", "s#dataset_1"]).clauses is None  # the setting decides
    with pytest.raises(SystemExit) as refused:
        parser.parse_args(["rerank", "s#dataset_1", "--clauses", "maximum"])
    assert refused.value.code == 2
    assert "invalid choice: 'maximum'" in capsys.readouterr().err
