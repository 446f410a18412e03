"""Dataset reranking in rounds: per-round selection, merge by fragment id, degradation."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.loopback import LoopbackServer, score_handler
from thalabus_graph.errors import ConfigurationError, ServiceReplyError
from thalabus_graph.fragments import Fragment
from thalabus_graph.rerank import (
    NoReranking,
    Passage,
    RerankFailure,
    RerankReply,
    ScoreApiReranker,
    ThresholdWithTiers,
    TopK,
    rerank_fragments,
    rerank_in_rounds,
)
from thalabus_graph.rerank.policies import order_key
from thalabus_graph.rerank.rounds import rerank_in_rounds_sync, rounds_of


class TableReranker:
    """Scores from a fixed table; records every call."""

    def __init__(self, table: dict[str, float], missing: set[str] | None = None) -> None:
        self.table = table
        self.missing = missing or set()
        self.calls: list[tuple[str, list[str]]] = []

    @property
    def available(self) -> bool:
        return True

    async def score(self, query: str, passages: Sequence[Passage]) -> RerankReply:
        self.calls.append((query, [p.fragmentid for p in passages]))
        scores = {p.fragmentid: self.table[p.fragmentid] for p in passages
                  if p.fragmentid in self.table and p.fragmentid not in self.missing}
        failed = tuple(p.fragmentid for p in passages if p.fragmentid in self.missing)
        failures = (RerankFailure(failed, ServiceReplyError("bad batch")),) if failed else ()
        return RerankReply(scores=scores, failures=failures)


def candidates(n: int) -> list[tuple[str, str, float]]:
    return [(f"docid-{i % 6}-c{i}", f"text {i}", 0.9 - i / 100) for i in range(n)]


def table_for(cands: list[tuple[str, str, float]]) -> dict[str, float]:
    return {fragmentid: ((i * 37) % 23) / 100 for i, (fragmentid, _, _) in enumerate(cands)}


def test_rounds_of_seven() -> None:
    cands = candidates(30)
    rounds = list(rounds_of(cands, 7))
    assert [len(r) for r in rounds] == [7, 7, 7, 7, 2]
    reranker = TableReranker(table_for(cands))
    result = rerank_in_rounds_sync(rounds, "bob", reranker, TopK(3))
    assert result.rounds == 5 and result.reranked and not result.degraded
    assert [len(ids) for _, ids in reranker.calls] == [7, 7, 7, 7, 2]
    assert all(q == "bob" for q, _ in reranker.calls)
    # per round the best 3 survive; merged and sorted globally
    expected: list[str] = []
    table = table_for(cands)
    for r in rounds:
        expected += sorted((c[0] for c in r), key=lambda f: (-table[f], f))[:3]
    assert sorted(f.fragmentid for f in result.fragments) == sorted(expected)
    assert list(result.fragments) == sorted(result.fragments, key=order_key)
    first = result.fragments[0]
    assert first.score == table[first.fragmentid]  # the reranker's score
    original = {c[0]: c[2] for c in cands}
    assert all(f.original_score == original[f.fragmentid] for f in result.fragments)
    assert all(f.documentid == f.fragmentid.rsplit("-", 1)[0] for f in result.fragments)


def test_merge_by_fragment_id_keeps_the_higher_score() -> None:
    class PerRound:
        available = True

        def __init__(self) -> None:
            self.round = 0

        async def score(self, query: str, passages: Sequence[Passage]) -> RerankReply:
            self.round += 1
            return RerankReply({p.fragmentid: 0.1 * self.round for p in passages})

    rounds = [[("a-1", "x", 0.5), ("b-1", "y", 0.4)], [("a-1", "x", 0.5)]]
    result = rerank_in_rounds_sync(rounds, "q", PerRound(), TopK(5))
    assert [(f.fragmentid, f.score) for f in result.fragments] == [("a-1", 0.2), ("b-1", 0.1)]


def test_an_empty_query_keeps_the_input_order() -> None:
    reranker = TableReranker({})
    rounds = [[("b-1", "x", 0.1), ("a-1", "y", 0.9)], [("c-1", "z", 0.5), ("b-1", "x", 0.1)]]
    result = rerank_in_rounds_sync(rounds, "  ", reranker, ThresholdWithTiers())
    assert not result.reranked and result.reason == "no-semantic-query"
    assert [f.fragmentid for f in result.fragments] == ["b-1", "a-1", "c-1"]
    assert [f.score for f in result.fragments] == [0.1, 0.9, 0.5]
    assert reranker.calls == []


def test_a_round_that_fails_is_a_partial_rerank_with_unscored_members_after() -> None:
    """A partial failure is flagged and keeps the unscored candidates after every
    scored one, in their retrieved order, with their retrieval scores (not invented ones)."""
    cands = candidates(14)
    table = table_for(cands)
    missing = {c[0] for c in cands[7:]}
    result = rerank_in_rounds_sync(rounds_of(cands, 7), "q", TableReranker(table, missing),
                                   TopK(100))
    assert result.reranked and result.degraded and result.reason == "partial"
    assert result.scored == 7
    head, tail = result.fragments[:7], result.fragments[7:]
    assert {f.fragmentid for f in head} == {c[0] for c in cands[:7]}
    assert all(f.score == table[f.fragmentid] for f in head)
    assert [(f.fragmentid, f.score) for f in tail] == [(c[0], c[2]) for c in cands[7:]]
    assert set(result.unscored_ids) == missing
    assert len(result.failures) == 1


def test_most_batches_failing_keeps_every_member_and_says_partial() -> None:
    """The issue-14 reproduction: 12 of 13 batches failed; the result is not a 1-member
    'complete' rerank but 1 scored member followed by the other 48, flagged partial."""
    cands = candidates(49)
    table = table_for(cands)
    missing = {c[0] for c in cands[4:]}
    result = rerank_in_rounds_sync(rounds_of(cands, 4), "q", TableReranker(table, missing),
                                   TopK(1))
    assert result.reason == "partial" and len(result.failures) == 12
    assert len(result.fragments) == 1 + 45 and result.scored == 1
    assert [f.fragmentid for f in result.fragments[1:]] == [c[0] for c in cands[4:]]


def test_the_merged_rounds_are_capped_keeping_the_tier_documents() -> None:
    """MAX_RERANKING_OUTPUT_FRAG caps the merged result; the best fragment of each of the
    min_output_doc best documents survives the cap even when it ranks below it."""
    cands = [(f"docid-{d}-c{i}", "t", 0.5) for d in range(6) for i in range(50)]
    table = {f: 0.9 - 0.1 * int(f.split("-")[1]) - 0.0001 * int(f.split("c")[-1])
             for f, _, _ in cands}
    everything = rerank_in_rounds_sync(rounds_of(cands, 100), "q", TableReranker(table),
                                       TopK(300))
    assert len(everything.fragments) == 300 and everything.capped == 0
    result = rerank_in_rounds_sync(rounds_of(cands, 100), "q", TableReranker(table),
                                   TopK(300), max_output=100, min_output_doc=5)
    assert len(result.fragments) == 100 and result.capped == 200
    assert {f.documentid for f in result.fragments} == {f"docid-{d}" for d in range(5)}
    assert list(result.fragments) == sorted(result.fragments, key=order_key)
    # documents 0 and 1 would fill the cap alone; documents 2-4 keep their best fragment each
    assert sum(f.documentid in ("docid-0", "docid-1") for f in result.fragments) == 97
    with pytest.raises(ConfigurationError):
        rerank_in_rounds_sync([[("a-1", "t", 0.1)]], "q", NoReranking(), max_output=0)


def test_the_cap_bounds_the_scored_part_and_keeps_every_unscored_member() -> None:
    cands = candidates(30)
    missing = {c[0] for c in cands[10:]}
    result = rerank_in_rounds_sync(rounds_of(cands, 10), "q",
                                   TableReranker(table_for(cands), missing), TopK(10),
                                   max_output=4)
    assert result.scored == 4 and result.capped == 6
    assert [f.fragmentid for f in result.fragments[4:]] == [c[0] for c in cands[10:]]


def test_a_configuration_error_of_the_reranker_is_raised_not_degraded() -> None:
    class Misconfigured:
        available = True

        async def score(self, query: str, passages: Sequence[Passage]) -> RerankReply:
            raise ConfigurationError("cross-encoder returned 3 scores for 4 pairs")

    with pytest.raises(ConfigurationError, match="3 scores for 4 pairs"):
        rerank_in_rounds_sync(rounds_of(candidates(8), 4), "q", Misconfigured(), TopK(3))


def test_a_reranker_exception_degrades_one_round() -> None:
    class Flaky:
        available = True

        def __init__(self) -> None:
            self.n = 0

        async def score(self, query: str, passages: Sequence[Passage]) -> RerankReply:
            self.n += 1
            if self.n == 1:
                raise RuntimeError("model crashed")
            return RerankReply({p.fragmentid: 0.5 for p in passages})

    cands = candidates(10)
    result = rerank_in_rounds_sync(rounds_of(cands, 5), "q", Flaky(), TopK(10))
    assert result.reranked and result.scored == 5 and len(result.fragments) == 10
    assert [f.fragmentid for f in result.fragments[5:]] == [c[0] for c in cands[:5]]
    assert "model crashed" in str(result.failures[0].error)
    assert len(result.unscored_ids) == 5


def test_nothing_scored_keeps_the_input_order_and_says_so() -> None:
    cands = candidates(9)
    reranker = TableReranker({}, missing={c[0] for c in cands})
    result = rerank_in_rounds_sync(rounds_of(cands, 7), "q", reranker, TopK(3))
    assert not result.reranked and result.reason == "failed"
    assert [f.fragmentid for f in result.fragments] == [c[0] for c in cands]
    assert result.degraded
    empty = rerank_in_rounds_sync(rounds_of(cands, 7), "q", TableReranker({}), TopK(3))
    assert not empty.reranked and empty.reason == "empty" and not empty.failures


def test_threshold_tiers_run_per_round() -> None:
    cands = [(f"docid-{d}-c{i}", "t", 0.5) for d in range(8) for i in range(3)]
    table = {fragmentid: 0.001 * (int(fragmentid.split("-")[1]) + 1) for fragmentid, _, _ in cands}
    policy = ThresholdWithTiers(min_score=0.2, min_output_frag=2, max_output_frag=4,
                                min_output_doc=3)
    result = rerank_in_rounds_sync(rounds_of(cands, 12), "q", TableReranker(table), policy)
    assert result.tiers == (2, 2)
    for r in rounds_of(cands, 12):
        round_docs = {f.documentid for f in result.fragments if (f.fragmentid, "t", 0.5) in r}
        assert len(round_docs) >= 3


def test_async_rounds_and_fragment_objects() -> None:
    @dataclass(frozen=True)
    class Fragment:
        fragmentid: str
        text: str
        score: float

    async def produce() -> AsyncIterator[list[Fragment]]:
        for r in rounds_of([Fragment(c[0], c[1], c[2]) for c in candidates(10)], 7):
            await asyncio.sleep(0)
            yield r

    result = asyncio.run(rerank_in_rounds(produce(), "q", NoReranking(), TopK(2)))
    assert result.rounds == 2 and result.reranked
    assert [f.fragmentid for f in result.fragments] == ["docid-0-c0", "docid-1-c1",
                                                        "docid-1-c7", "docid-2-c8"]
    assert all(f.score == f.original_score for f in result.fragments)


def test_the_sync_wrapper_works_inside_a_running_loop() -> None:
    async def inside() -> int:
        return len(rerank_fragments(candidates(5), "q", NoReranking(), TopK(2)).fragments)

    assert asyncio.run(inside()) == 2


def test_rounds_through_a_real_score_server_replay_identically() -> None:
    cands = [(f"docid-{i % 9}-p{i}", " ".join(["bob", "cat", "dog"][: i % 4]), 0.5)
             for i in range(40)]
    with LoopbackServer(score_handler("tei")) as server:
        reranker = ScoreApiReranker(server.url, protocol="tei", batch_size=4)
        policy = ThresholdWithTiers(min_score=0.6, min_output_frag=5, min_output_doc=5)
        first = rerank_fragments(cands, "bob cat", reranker, policy, round_size=7)
        again = rerank_fragments(cands, "bob cat", reranker, policy, round_size=7)
    assert first.reranked and not first.degraded
    assert first.to_dicts() == sorted(first.to_dicts(),
                                      key=lambda d: (-d["score"], d["fragmentid"]))
    assert again.to_dicts() == first.to_dicts()
    # with the whole input in one round the order does not depend on the input order
    one = rerank_fragments(cands, "bob cat", TableReranker({c[0]: 0.5 for c in cands}),
                           TopK(40), round_size=100)
    two = rerank_fragments(list(reversed(cands)), "bob cat",
                           TableReranker({c[0]: 0.5 for c in cands}), TopK(40), round_size=100)
    assert [f.fragmentid for f in one.fragments] == [f.fragmentid for f in two.fragments]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 5), st.integers(0, 30), st.floats(0, 1)), max_size=40),
    st.integers(1, 10),
)
def test_rounds_output_is_sorted_and_drawn_from_the_input(
    rows: list[tuple[int, int, float]], size: int
) -> None:
    cands = [(f"docid-{d}-c{c}", "t", s) for d, c, s in rows]
    table = {fragmentid: s for fragmentid, _, s in cands}
    result = rerank_fragments(cands, "q", TableReranker(table), ThresholdWithTiers(0.5, 3, 6, 2),
                              round_size=size)
    out = list(result.fragments)
    assert out == sorted(out, key=order_key)
    assert len({f.fragmentid for f in out}) == len(out)
    assert {f.fragmentid for f in out} <= set(table)


def _never() -> Iterator[list[tuple[str, str, float]]]:
    return iter([])


def test_no_rounds_at_all() -> None:
    result = rerank_in_rounds_sync(_never(), "q", NoReranking())
    assert result.fragments == () and result.rounds == 0


def test_bad_candidate_tuples_are_rejected() -> None:
    from thalabus_graph.errors import ConfigurationError

    with pytest.raises(ConfigurationError):
        rerank_in_rounds_sync([[("a-1", "t")]], "q", NoReranking())  # type: ignore[list-item]
    with pytest.raises(ConfigurationError):
        list(rounds_of([1], 0))


def test_the_document_id_given_with_a_candidate_is_kept_scored_or_not() -> None:
    stub = Passage("docid-1001", "a title", 1.0, "docid-1001")
    chapter = Fragment("docid-1002-c1", "docid-1002", "text", 0.5, "chapters")
    table = TableReranker({"docid-1001": 0.9, "docid-1002-c1": 0.4})
    scored = rerank_in_rounds_sync([[stub, chapter]], "q", table, TopK(5))
    kept = rerank_in_rounds_sync([[stub, chapter]], "", table, TopK(5))
    for result in (scored, kept):
        assert {(f.fragmentid, f.documentid) for f in result.fragments} == {
            ("docid-1001", "docid-1001"), ("docid-1002-c1", "docid-1002")}
