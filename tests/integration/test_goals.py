"""A goal's context on the real Neo4j: thresholds by scale, hidden members, every fill-up skip
path, the collection and loaded-documents budgets, the final truncation, fragment and
category-only message lines, the goal's own RAG fragments; a rerank linked to its goal; a
derived dataset reranked again without a query; the ``goal`` command."""

from __future__ import annotations

import json
from collections.abc import Mapping

import pytest

from tests.integration.sample import documents, load_sample
from tests.support.loopback import LoopbackServer
from thalabus_graph import ThalabusGraph
from thalabus_graph.cli import main
from thalabus_graph.datasets import Member
from thalabus_graph.errors import ConfigurationError, DatasetError
from thalabus_graph.fragments import document_id_of
from thalabus_graph.goals import ELLIPSIS, truncate_lines
from thalabus_graph.graph.database import Database
from thalabus_graph.rerank import NoReranking, ScoreApiReranker

pytestmark = pytest.mark.integration
BIG = 10_000_000
IDS = [f"docid-10{n:02d}-c2" for n in range(1, 13)]
"""Twelve chapters of twelve documents, each a few hundred characters long."""


@pytest.fixture(scope="module")
def graph(db: Database) -> ThalabusGraph:
    base = load_sample(db)
    return ThalabusGraph(db, settings=base.settings, embedder=base.embedder,
                         reranker=NoReranking())


@pytest.fixture(scope="module")
def texts(graph: ThalabusGraph) -> dict[str, str]:
    """The text of every chapter in IDS, as the graph holds it."""
    ds = graph.datasets.create(weighted({i: 0.5 for i in IDS}), session="texts")
    return {m.fragmentid: m.text or "" for m in graph.datasets.members(ds)}


def weighted(weights: Mapping[str, float]) -> list[Member]:
    return [Member(i, document_id_of(i), None, w, "chapters") for i, w in weights.items()]


def reranked(graph: ThalabusGraph, session: str, weights: Mapping[str, float],
             scale: str = "reranker") -> str:
    """A dataset of the given members and weights, on the given weight scale."""
    return graph.datasets.create(weighted(weights), session=session, kind="rerank",
                                 flags={"weight_scale": scale})


def ids(members: list[Member]) -> list[str]:
    return [m.fragmentid for m in members]


# --- thresholds, hidden members, fill-up ---------------------------------------------------


def test_members_pass_by_the_threshold_of_their_scale_and_hidden_ones_are_skipped(
        graph: ThalabusGraph) -> None:
    weights = dict(zip(IDS[:6], [0.9, 0.5, 0.3, 0.01, 0.005, 0.2], strict=True))
    ds = reranked(graph, "scale", weights)
    graph.datasets.hide(ds, [IDS[1], IDS[3]])  # one above the threshold, one below
    graph.goals.use_dataset("g-hidden", ds)
    ctx = graph.goal_context("g-hidden", min_score=0.1, target=3, char_budget=BIG)
    assert ids(ctx.fragments) == [IDS[0], IDS[2], IDS[5]] and not ctx.fill_up_used
    filled = graph.goal_context("g-hidden", min_score=0.1, target=5, char_budget=BIG)
    assert ids(filled.fragments) == [IDS[0], IDS[2], IDS[5], IDS[4]]  # hidden IDS[3] never
    assert filled.fill_up_used and filled.filled_from == [ds]
    retrieval = reranked(graph, "scale", {IDS[6]: 0.07, IDS[7]: 0.04}, scale="retrieval")
    graph.goals.use_dataset("g-retrieval", retrieval)
    ctx = graph.goal_context("g-retrieval", min_score=0.5, min_retrieval_score=0.05, target=1)
    assert ids(ctx.fragments) == [IDS[6]] and ctx.weight_scales == {retrieval: "retrieval"}


def test_fill_up_runs_when_fewer_than_the_target_pass(graph: ThalabusGraph) -> None:
    ds = reranked(graph, "fill", {IDS[0]: 0.9, IDS[1]: 0.01, IDS[2]: 0.015})
    graph.goals.use_dataset("g-fill-runs", ds)
    ctx = graph.goal_context("g-fill-runs", min_score=0.5, target=2, char_budget=BIG)
    assert ctx.fill_up_used and ids(ctx.fragments) == [IDS[0], IDS[2]]


def test_fill_up_is_skipped_when_the_budget_ran_out_in_the_normal_pass(
        graph: ThalabusGraph, texts: dict[str, str]) -> None:
    ds = reranked(graph, "skip-budget", {IDS[0]: 0.9, IDS[1]: 0.8, IDS[2]: 0.01})
    graph.goals.use_dataset("g-skip-budget", ds)
    budget = len(texts[IDS[0]]) + len(texts[IDS[1]]) - 1
    ctx = graph.goal_context("g-skip-budget", min_score=0.5, target=10, char_budget=budget)
    assert ctx.truncated and not ctx.fill_up_used and ids(ctx.fragments) == [IDS[0]]


def test_fill_up_is_skipped_without_below_threshold_members(graph: ThalabusGraph) -> None:
    ds = reranked(graph, "skip-none", {IDS[0]: 0.9, IDS[1]: 0.8})
    graph.goals.use_dataset("g-skip-none", ds)
    ctx = graph.goal_context("g-skip-none", min_score=0.5, target=10, char_budget=BIG)
    assert not ctx.fill_up_used and not ctx.truncated and len(ctx.fragments) == 2


def test_fill_up_is_skipped_when_the_target_is_met(graph: ThalabusGraph) -> None:
    ds = reranked(graph, "skip-met", {IDS[0]: 0.9, IDS[1]: 0.8, IDS[2]: 0.01})
    graph.goals.use_dataset("g-skip-met", ds)
    ctx = graph.goal_context("g-skip-met", min_score=0.5, target=2, char_budget=BIG)
    assert not ctx.fill_up_used and ids(ctx.fragments) == [IDS[0], IDS[1]]


# --- the goal's own RAG fragments ---------------------------------------------------------


def test_the_goals_own_rag_fragments_come_first_each_fragment_once(
        graph: ThalabusGraph) -> None:
    found = graph.query('"religious conversion"', return_documents=False).fragments
    own = [f for n, f in enumerate(found)  # the best of each of four documents
           if f.documentid not in {g.documentid for g in found[:n]}][:4]
    assert graph.goals.add_fragments("g-own", own) == 4
    ctx = graph.goal_context("g-own", char_budget=BIG)  # a goal with no dataset
    assert ids(ctx.fragments) == [f.fragmentid for f in own] and ctx.rag_fragments == 4
    assert ctx.rag_characters == sum(len(f.text or "") for f in own) and ctx.characters == 0
    extra = next(i for i in IDS if i not in ids(ctx.fragments))
    ds = reranked(graph, "own", {own[0].fragmentid: 0.9, extra: 0.8})
    graph.goals.use_dataset("g-own", ds)
    ctx = graph.goal_context("g-own", min_score=0.5, char_budget=BIG)
    assert ids(ctx.fragments) == [*(f.fragmentid for f in own), extra]
    with pytest.raises(DatasetError):
        graph.goals.add_fragments("g-own", [*own, Member("docid-9999-c1", "docid-9999", "x",
                                                         0.5, "chapters")])
    assert graph.goal_context("g-own", min_score=0.5).rag_fragments == 4
    with pytest.raises(DatasetError):
        graph.goal_context("g-nobody")


# --- budgets ------------------------------------------------------------------------------


def test_each_collection_fills_the_message_budget_and_the_message_is_cut_to_it(
        graph: ThalabusGraph, texts: dict[str, str]) -> None:
    own, theirs = IDS[:3], IDS[3:6]
    budget = max(sum(len(texts[i]) for i in own), sum(len(texts[i]) for i in theirs)) + 200
    graph.goals.add_fragments("g-ceiling", weighted(dict.fromkeys(own, 0.9)))
    graph.goals.use_dataset("g-ceiling", reranked(graph, "ceiling", dict.fromkeys(theirs, 0.9)))
    ctx = graph.goal_context("g-ceiling", min_score=0.5, char_budget=budget)
    assert ctx.rag_characters <= budget and ctx.characters <= budget
    assert ctx.rag_characters + ctx.characters > budget and not ctx.truncated
    assert ids(ctx.fragments) == [*own, *theirs]
    assert ctx.message_budget == budget and ctx.message_truncated
    assert len(ctx.message) <= budget and ctx.lines[-1].endswith(ELLIPSIS)
    assert ctx.lines[:3] == [f"[{i}] {' '.join(texts[i].split())}" for i in own]


def test_the_message_holds_the_loaded_documents_first_within_its_budget(
        graph: ThalabusGraph) -> None:
    chapters = {d["documentid"]: "\n\n".join(d["chapters"]) for d in documents()
                if d["documentid"] in ("docid-1003", "docid-1005")}
    assert graph.goals.load_document("g-loaded", "docid-1003") == 1
    assert graph.goals.load_document("g-loaded", "docid-1005") == 2
    with pytest.raises(DatasetError):
        graph.goals.load_document("g-loaded", "docid-9999")
    graph.goals.use_dataset("g-loaded", reranked(graph, "loaded", dict.fromkeys(IDS[:4], 0.9)))
    first = len(chapters["docid-1003"])
    cap = first + 100
    ctx = graph.goal_context("g-loaded", min_score=0.5, char_budget=5000, loaded_budget=cap)
    one, two = ctx.loaded
    assert (one.documentid, one.text, one.truncated) == ("docid-1003", chapters["docid-1003"],
                                                         False)
    assert two.text == chapters["docid-1005"][:100] and two.truncated
    assert two.characters == len(chapters["docid-1005"])
    assert ctx.message_budget == 5000 and len(ctx.message) <= 5000
    titles = {d["documentid"]: d["title"] for d in documents()}
    assert ctx.lines[0] == f"[docid-1003] {titles['docid-1003']}\n{one.text}"
    assert ctx.message.startswith(ctx.lines[0] + "\n[docid-1005] ")
    assert "docid-1003-c2" not in ids(ctx.fragments) and ctx.repeats == 1  # in the loaded text
    assert ctx.characters <= 5000  # the collection itself keeps the whole ceiling
    roomy = graph.goal_context("g-loaded", min_score=0.5, char_budget=5000, loaded_budget=0)
    assert [d.text for d in roomy.loaded] == ["", ""] and roomy.message_budget == 5000
    assert not roomy.message_truncated and len(roomy.lines) == 4


def test_the_final_truncation_keeps_whole_lines_then_cuts_one() -> None:
    lines = ["[a] " + "x" * 20, "[b] " + "y" * 20, "[c] " + "z" * 20]
    assert truncate_lines(lines, 1000) == (lines, False)
    whole = len(lines[0]) + 1 + len(lines[1])
    assert truncate_lines(lines, whole) == (lines[:2], True)
    kept, cut = truncate_lines(lines, whole + 11)
    assert cut and kept[:2] == lines[:2] and kept[2] == "[c] zzzzz" + ELLIPSIS
    assert len("\n".join(kept)) == whole + 11
    assert truncate_lines(lines, whole + 5) == (lines[:2], True)  # no text would fit
    assert truncate_lines(lines, 0) == ([], True)


# --- message lines ------------------------------------------------------------------------


def test_category_only_members_become_document_lines_after_the_fragment_lines(
        graph: ThalabusGraph, texts: dict[str, str]) -> None:
    stubs = graph.query("COUNTRY_OF_ORIGIN=SY", create_dataset=True, session="cat",
                        return_documents=False)
    graph.goals.use_dataset("g-category", reranked(graph, "cat", {IDS[0]: 0.9}))
    graph.goals.use_dataset("g-category", stubs.dataset_ids[0])
    ctx = graph.goal_context("g-category", min_score=0.5, char_budget=BIG)
    syrian = [d for d in documents()
              if "SY" in d.get("categories", {}).get("COUNTRY_OF_ORIGIN", [])]
    expected = []
    for d in sorted(syrian, key=lambda d: d["documentid"]):
        cats = "; ".join(f"{n}={','.join(sorted(v))}" for n, v in sorted(d["categories"].items()))
        expected.append(f"[{d['documentid']}] {d['title']} | {cats}")
    assert ctx.lines[0] == f"[{IDS[0]}] {' '.join(texts[IDS[0]].split())}"
    assert ctx.lines[1:] == expected
    budget = len(ctx.lines[0]) + 1 + len(expected[0]) + 1 + len(expected[1])
    cut = graph.goal_context("g-category", min_score=0.5, char_budget=budget)
    assert cut.lines == ctx.lines[:3] and cut.message_truncated
    assert len(cut.message) == budget


# --- reranks and goals --------------------------------------------------------------------


def test_a_rerank_for_a_goal_takes_its_parents_place_or_joins_it(graph: ThalabusGraph) -> None:
    first = reranked(graph, "link", {IDS[0]: 0.9}, scale="retrieval")
    parent = reranked(graph, "link", {IDS[1]: 0.9, IDS[2]: 0.1}, scale="retrieval")
    graph.goals.use_dataset("g-link", first)
    graph.goals.use_dataset("g-link", parent)
    result = graph.rerank_dataset(parent, '"asylum"', session="link", goal="g-link")
    assert graph.goals.dataset_ids("g-link") == [first, result.dataset_id]
    again = graph.rerank_dataset(first, '"asylum"', session="link", goal="g-other")
    assert graph.goals.dataset_ids("g-other") == [again.dataset_id]


def test_a_derived_dataset_reranks_again_with_or_without_a_query(
        db: Database, graph: ThalabusGraph, score_server: LoopbackServer) -> None:
    graph = ThalabusGraph(db, settings=graph.settings, embedder=graph.embedder,
                          reranker=ScoreApiReranker(score_server.url, protocol="vllm-score"))
    parent = graph.query('"religious conversion" AND NOT COUNTRY_OF_ORIGIN=IR',
                         create_dataset=True, session="again",
                         return_documents=False).dataset_ids[0]
    first = graph.rerank_dataset(parent, session="again")
    assert first.query == "religious conversion"
    assert graph.datasets.get(first.dataset_id).source_query == \
        '"religious conversion" AND NOT COUNTRY_OF_ORIGIN=IR'
    assert first.reranked and first.reason is None
    second = graph.rerank_dataset(first.dataset_id, session="again")
    assert second.query == first.query and second.parent_id == first.dataset_id
    assert second.reranked and second.reason is None
    assert {f.fragmentid: f.score for f in second.fragments} == \
        {f.fragmentid: f.score for f in first.fragments if f.fragmentid in
         {g.fragmentid for g in second.fragments}}
    third = graph.rerank_dataset(second.dataset_id, '"asylum" AND "church"', session="again")
    assert third.query == "asylum AND church"
    # A rerank that recorded only its plain rerank text: read as one phrase.
    plain = graph.datasets.create(weighted({IDS[0]: 0.5}), session="again", kind="rerank",
                                  query="asylum AND church", flags={"weight_scale": "reranker"})
    assert graph.datasets.get(plain).stored_query() == '"asylum AND church"'
    assert graph.rerank_dataset(plain, session="again").query == "asylum AND church"


# --- the goal command ---------------------------------------------------------------------


def test_the_goal_command_links_loads_and_shows(graph: ThalabusGraph, neo4j_uri: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    uri = ["--uri", neo4j_uri]
    ds = reranked(graph, "cli", {IDS[0]: 0.9, IDS[1]: 0.01})
    assert main(["goal", "use", "g-cli", ds, *uri]) == 0
    assert f"goal g-cli uses {ds} (ordinal 1)" in capsys.readouterr().out
    assert main(["goal", "load", "g-cli", "docid-1003", "--json", *uri]) == 0
    assert json.loads(capsys.readouterr().out)["ordinal"] == 1
    assert main(["goal", "show", "g-cli", "--json", "--char-budget", "3000",
                 "--loaded-budget", "500", "--min-score", "0.5", *uri]) == 0
    shown = json.loads(capsys.readouterr().out)
    ctx = graph.goal_context("g-cli", char_budget=3000, loaded_budget=500, min_score=0.5)
    assert shown == {"goal": "g-cli", **json.loads(json.dumps(ctx.to_dict()))}
    assert shown["message_budget"] == 3000 and shown["loaded"][0]["truncated"]
    assert main(["goal", "show", "g-cli", "--char-budget", "3000", "--loaded-budget", "500",
                 "--min-score", "0.5", *uri]) == 0
    out = capsys.readouterr().out
    assert out.endswith(ctx.message + "\n") and "loaded docid-1003: 500 of" in out
    assert main(["rerank", ds, "--query", '"asylum"', "--goal", "g-cli", "--json", *uri]) == 0
    derived = json.loads(capsys.readouterr().out)["dataset_id"]
    assert graph.goals.dataset_ids("g-cli") == [derived]
    assert main(["goal", "show", "g-nobody", *uri]) == 2      # not found: bad input
    assert main(["goal", "load", "g-cli", "docid-9999", *uri]) == 2
    assert main(["goal", "show", "g-cli", "--char-budget", "-1", *uri]) == 2


def test_a_goal_reads_back_through_the_neomodel_model(graph: ThalabusGraph) -> None:
    from thalabus_graph.graph import models

    ds = reranked(graph, "model", {IDS[0]: 0.9})
    graph.goals.use_dataset("g-model", ds)
    graph.goals.add_fragments("g-model", [*weighted({IDS[1]: 0.5}),
                                          Member("docid-1004", "docid-1004", None, 1.0,
                                                 "category")])
    graph.goals.load_document("g-model", "docid-1003")
    models.bind(graph.db.driver, graph.db.database)
    goal = models.Goal.nodes.get(goalid="g-model")
    assert [d.datasetid for d in goal.datasets.all()] == [ds]
    assert [f.fragmentid for f in goal.rag_fragments.all()] == [IDS[1]]
    assert [d.documentid for d in goal.rag_documents.all()] == ["docid-1004"]
    assert [d.documentid for d in goal.loaded_documents.all()] == ["docid-1003"]


# --- long members and repeated text -------------------------------------------------------

LONG = "own-long"
"""A document whose one chapter is longer than the default message budget."""
NESTED = "own-002"
"""A one-paragraph chapter (c1 = p1) and a two-paragraph chapter (c2 = p2 + p3)."""
HUGE = "own-huge"
"""A document whose one chapter holds a million characters."""
HUGE_TEXT = ("Ein sehr langer Abschnitt über Verfahren und Fristen. " * 20_000)[:1_000_000]


@pytest.fixture(scope="module")
def extra(graph: ThalabusGraph) -> ThalabusGraph:
    words = ("Sehr langer Abschnitt über Asylverfahren. " * 1000)
    long_text = (words * 2)[:graph.settings.max_rag_message_length + 1]
    graph.ingest([{"documentid": LONG, "title": "Long", "language": "de",
                   "chapters": [long_text]},
                  {"documentid": HUGE, "title": "Huge", "language": "de",
                   "chapters": [HUGE_TEXT]},
                  {"documentid": NESTED, "title": "Nested", "language": "en",
                   "chapters": ["Bob the cat sleeps on the mat.",
                                "Jane sweeps the kitchen floor.\n\nBob watches her."]}],
                 strict=True, progress=False)
    return graph


def test_a_member_longer_than_the_budget_is_skipped_and_the_rest_fill_the_context(
        extra: ThalabusGraph) -> None:
    budget = extra.settings.max_rag_message_length
    ds = reranked(extra, "long", {f"{LONG}-c1": 0.99, IDS[0]: 0.9, IDS[1]: 0.8})
    extra.goals.use_dataset("g-long", ds)
    extra.goals.add_fragments("g-long-own", weighted({f"{LONG}-c1": 0.99, IDS[2]: 0.5}))
    ctx = extra.goal_context("g-long", min_score=0.5)
    assert ids(ctx.fragments) == [IDS[0], IDS[1]] and ctx.truncated
    assert ctx.message and len(ctx.message) <= budget and not ctx.message_truncated
    own = extra.goal_context("g-long-own")
    assert ids(own.fragments) == [IDS[2]] and own.rag_fragments == 1
    below = reranked(extra, "long", {f"{LONG}-c1": 0.4, IDS[3]: 0.3})
    extra.goals.use_dataset("g-long-fill", below)
    filled = extra.goal_context("g-long-fill", min_score=0.5, target=2)
    assert filled.fill_up_used and ids(filled.fragments) == [IDS[3]]


@pytest.mark.parametrize("arguments", [
    {"char_budget": float("nan")}, {"char_budget": float("inf")}, {"char_budget": -1},
    {"char_budget": 0}, {"char_budget": 2.5}, {"loaded_budget": float("nan")},
    {"loaded_budget": -1}, {"target": float("nan")}, {"target": -3},
    {"min_score": float("nan")}, {"min_retrieval_score": float("inf")},
])
def test_a_budget_target_or_threshold_out_of_range_is_refused(
        graph: ThalabusGraph, arguments: dict[str, object]) -> None:
    graph.goals.use_dataset("g-range", reranked(graph, "range", {IDS[0]: 0.9}))
    with pytest.raises(ConfigurationError, match=next(iter(arguments))):
        graph.goal_context("g-range", **arguments)  # type: ignore[arg-type]


def test_a_text_reaches_the_message_once(extra: ThalabusGraph) -> None:
    c1, p1, c2, p2, p3 = (f"{NESTED}-{s}" for s in ("c1", "p1", "c2", "p2", "p3"))
    ds = reranked(extra, "nested", {p1: 0.95, c1: 0.9, p2: 0.8, c2: 0.7, p3: 0.6})
    extra.goals.use_dataset("g-nested", ds)
    ctx = extra.goal_context("g-nested", min_score=0.5, char_budget=BIG)
    assert ids(ctx.fragments) == [p1, c2] and ctx.repeats == 3
    texts = [line.split("] ", 1)[1] for line in ctx.lines]
    assert len(ctx.lines) == 2
    assert not any(a in b for a in texts for b in texts if a is not b)
    extra.goals.load_document("g-nested", NESTED)
    loaded = extra.goal_context("g-nested", min_score=0.5, char_budget=BIG)
    assert loaded.fragments == [] and loaded.repeats == 5
    assert loaded.lines == [f"[{NESTED}] Nested\nBob the cat sleeps on the mat.\n\n"
                            "Jane sweeps the kitchen floor.\n\nBob watches her."]


def test_a_huge_chapter_is_read_back_cut_to_each_readers_bound(extra: ThalabusGraph) -> None:
    s = extra.settings
    ds = reranked(extra, "huge", {f"{HUGE}-c1": 0.9, IDS[0]: 0.8})
    huge, small = extra.datasets.members(ds)
    assert huge.characters == len(HUGE_TEXT) and huge.text_truncated
    assert huge.text == HUGE_TEXT[:s.max_result_text_chars]
    assert huge.to_dict()["text_truncated"] and not small.text_truncated
    assert small.characters == len(small.text or "")
    result = extra.rerank_dataset(ds, '"Fristen"', session="huge")
    assert [len(f.text) for f in result.fragments if f.fragmentid == huge.fragmentid] == \
        [s.max_rerank_chars]
    extra.goals.use_dataset("g-huge", ds)
    extra.goals.add_fragments("g-huge", weighted({f"{HUGE}-p1": 0.9}))
    extra.goals.load_document("g-huge", HUGE)
    ctx = extra.goal_context("g-huge", min_score=0.5)
    assert ids(ctx.fragments) == [IDS[0]] and ctx.truncated
    loaded = ctx.loaded[0]
    assert loaded.characters == len(HUGE_TEXT) and loaded.truncated
    assert loaded.text == HUGE_TEXT[:s.max_loaded_document_length]
    assert len(ctx.message) <= s.max_rag_message_length
