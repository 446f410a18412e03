"""Restrictions pushed as Cypher patterns: the ontology scope and a category under an
AND are checked on each hit's document inside the search statements, never listed in Python.

The reference evaluator stays the oracle: on random queries within an ontology that holds only
part of the sample corpus (so the pattern is really checked), the compiled plan gives the
reference's fragments, scores and contributions.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.integration.sample import docs_where, has, load_sample
from tests.integration.test_query_engine import CATEGORIES, PHRASES, TERMS, queries
from tests.support.contributions import same_contributions
from tests.support.examples import examples
from tests.support.paths import force_index_path
from tests.support.spies import spy_read_transactions
from thalabus_graph import QueryResult, ThalabusGraph, serialize
from thalabus_graph.fragments import Fragment
from thalabus_graph.graph.database import Database
from thalabus_graph.plan import cost
from thalabus_graph.plan.steps import CategoryPattern, FilterPattern
from thalabus_graph.query import And, Category, Node, Not, Or, Semantic, Text, parse
from thalabus_graph.search import executor
from thalabus_graph.search.executor import SearchExecutor
from thalabus_graph.search.vocabulary import check_query

ASYLUM = docs_where(lambda d: d.get("ontology") == "asylum")
STORIES = docs_where(lambda d: d.get("ontology") == "stories")
IQ = docs_where(has("COUNTRY_OF_ORIGIN", "IQ"))
JANE = docs_where(has("CHARACTER", "Jane"))


@pytest.fixture(scope="module")
def graph(db: Database) -> ThalabusGraph:
    return load_sample(db)


def _steps(tree: dict[str, Any]) -> list[dict[str, Any]]:
    """Every step of a profiled plan tree, iteratively."""
    out: list[dict[str, Any]] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        out += node["steps"]
        stack.extend(node.get("children", []))
    return out


def _assert_same_as_reference(compiled: list[Fragment], reference: list[Fragment],
                              where: str) -> None:
    """The compiled plan's fragments are the reference's: same ids in the same order, same
    scores (to 1e-5) and contributions. The two may score a fragment by different paths (the
    vector index's score, the exact cosine of the stored float32 vector), which agree to
    about 1e-6 and drift a little more on the calibrated scale's steeper stretches."""
    assert [f.fragmentid for f in compiled] == [f.fragmentid for f in reference], where
    for a, b in zip(compiled, reference, strict=True):
        assert math.isclose(a.score, b.score, abs_tol=1e-5), where
        assert same_contributions(a.contributions, b.contributions), (where, a, b)


@settings(max_examples=examples(25), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(queries, st.sampled_from(["asylum", "stories"]))
def test_compiled_plan_matches_the_reference_within_an_ontology(
        graph: ThalabusGraph, node: Node, ontology: str) -> None:
    compiled, _ = graph.evaluate(node, ontology_id=ontology)
    reference, _ = graph.evaluate(node, ontology_id=ontology, reference=True)
    where = f"{serialize(node)} in {ontology}"
    _assert_same_as_reference(compiled, reference, where)
    assert {f.documentid for f in compiled} <= (ASYLUM if ontology == "asylum" else STORIES)


def test_the_ontology_scope_is_a_pattern_not_a_list(graph: ThalabusGraph) -> None:
    result = graph.query('"cat"', ontology_id="stories", return_documents=False,
                         profile=True)
    assert result.plan is not None
    steps = _steps(result.plan["tree"])
    assert {f.documentid for f in result.fragments} <= STORIES and result.fragments
    # The compiler read the ontology's size first (it holds part of the corpus), so every
    # search checks its pattern and none ran unscoped.
    assert not [s for s in steps if s.get("cypher") == "search_phrase"]
    semantic = [s for s in steps if s["kind"] == "semantic"]
    assert semantic and all(s["ontology_pattern"] == "stories" for s in semantic)
    assert all(s["filtered_documents"] == len(STORIES) for s in semantic)
    assert not any(s["kind"] == "universe" for s in steps)


def test_a_category_under_an_and_is_a_pattern_not_a_list(graph: ThalabusGraph) -> None:
    result = graph.query('"asylum seeker" AND COUNTRY_OF_ORIGIN=IQ', return_documents=False,
                         profile=True)
    assert result.plan is not None
    steps = _steps(result.plan["tree"])
    assert result.fragments and {f.documentid for f in result.fragments} <= IQ
    assert not any(s["kind"] == "category" for s in steps)  # no id list read
    (count,) = [s for s in steps if s["kind"] == "category_count"]
    assert count["documents"] == len(IQ)
    pushed = [s for s in steps if "category_pattern" in s]
    assert pushed and all(s["category_pattern"] == {"name": "COUNTRY_OF_ORIGIN",
                                                    "values": ["IQ"]} for s in pushed)
    searched = [s for s in pushed if s["kind"] == "semantic" and s["path"] != "none"]
    assert searched and all(s["path"] == "exact" for s in searched)  # "none": no such fragments
    assert all("category" in f.contributions for f in result.fragments)


def test_a_pushed_category_and_the_ontology_scope_together(graph: ThalabusGraph) -> None:
    inside = graph.query('"cat" AND CHARACTER=Jane', ontology_id="stories",
                         return_documents=False)
    assert inside.fragments and {f.documentid for f in inside.fragments} <= JANE & STORIES
    outside = graph.query('"cat" AND CHARACTER=Jane', ontology_id="asylum",
                          return_documents=False)
    assert {f.documentid for f in outside.fragments} <= JANE & ASYLUM


def test_a_not_category_under_an_and_is_a_not_exists_pattern(graph: ThalabusGraph) -> None:
    query = '"asylum seeker" AND NOT COUNTRY_OF_ORIGIN=IQ'
    result = graph.query(query, return_documents=False, profile=True)
    assert result.plan is not None
    steps = _steps(result.plan["tree"])
    assert result.fragments and not {f.documentid for f in result.fragments} & IQ
    assert not any(s["kind"] in ("category", "universe") for s in steps)  # nothing listed
    (count,) = [s for s in steps if s["kind"] == "category_count"]
    total = len(graph.db.read("universe_all_documents")[0]["documentids"])
    assert count["documents"] == total - len(IQ) and count["negated"] is True
    pushed = [s for s in steps if "category_pattern" in s]
    assert pushed and all(s["category_pattern"]["negated"] for s in pushed)
    reference, _ = graph.evaluate(query, reference=True)
    assert [(f.fragmentid, f.contributions) for f in result.fragments] == \
        [(f.fragmentid, f.contributions) for f in reference]
    scoped = graph.query(query, ontology_id="asylum", return_documents=False)
    assert {f.documentid for f in scoped.fragments} <= ASYLUM - IQ


# --- nested filters pushed as one pattern -----------------------------------------------------
filter_leaves = st.sampled_from(CATEGORIES).map(lambda c: Category(c[0], c[1]))
filters = st.recursive(filter_leaves, lambda kids: st.one_of(
    st.tuples(kids, kids).map(lambda p: And(*p)),
    st.tuples(kids, kids).map(lambda p: Or(*p)),
    kids.map(Not),
), max_leaves=5)
phrases = st.one_of(st.sampled_from(PHRASES).map(Semantic),
                    st.sampled_from(TERMS).map(lambda t: Text(t, False)))


@settings(max_examples=examples(30), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(phrases, filters, st.booleans(), st.sampled_from([None, "asylum", "stories"]))
def test_a_nested_filter_pushed_as_one_pattern_matches_the_reference(
        graph: ThalabusGraph, phrase: Node, condition: Node, phrase_first: bool,
        ontology: str | None) -> None:
    node = And(phrase, condition) if phrase_first else And(condition, phrase)
    result = graph.query(serialize(node), ontology_id=ontology, profile=True,
                         return_documents=False)
    reference, _ = graph.evaluate(node, ontology_id=ontology, reference=True)
    where = f"{serialize(node)} in {ontology}"
    _assert_same_as_reference(result.fragments, reference, where)
    assert result.plan is not None
    # Pushed as a pattern: no category's documents and no NOT universe are listed.
    steps = _steps(result.plan["tree"])
    assert not any(s["kind"] == "universe" or s.get("cypher") in (
        "explain_category_documents", "search_category") for s in steps), where


def _profiled(graph: ThalabusGraph, query: str
              ) -> tuple[QueryResult, list[dict[str, Any]], list[Any]]:
    """The profiled fragments of ``query``, its plan's steps and the patterns they pushed."""
    result = graph.query(query, return_documents=False, profile=True)
    assert result.plan is not None
    steps = _steps(result.plan["tree"])
    return result, steps, [s["category_pattern"] for s in steps if "category_pattern" in s]


def test_the_nested_shape_is_one_filter_parameter(graph: ThalabusGraph) -> None:
    query = '"asylum" AND (COUNTRY_OF_ORIGIN=IQ OR (DECISION=granted AND NOT COUNTRY_OF_ORIGIN=SY))'
    result, steps, pushed = _profiled(graph, query)
    assert pushed and all(pattern == {"any_of": [
        [{"name": "COUNTRY_OF_ORIGIN", "values": ["IQ"]}],
        [{"name": "DECISION", "values": ["granted"]},
         {"name": "COUNTRY_OF_ORIGIN", "values": ["SY"], "negated": True}]]} for pattern in pushed)
    (count,) = [s for s in steps if s["kind"] == "category_count"]
    expected = docs_where(lambda d: has("COUNTRY_OF_ORIGIN", "IQ")(d) or (
        has("DECISION", "granted")(d) and not has("COUNTRY_OF_ORIGIN", "SY")(d)))
    # Unscoped, the estimate is the seed values' documents summed (degree lookups): an upper
    # bound of the matches, marked as such.
    seeds = len(docs_where(has("COUNTRY_OF_ORIGIN", "IQ"))) + len(
        docs_where(has("DECISION", "granted")))
    assert count["documents"] == seeds >= len(expected)
    assert count["estimate"].startswith("upper bound")
    assert result.fragments and {f.documentid for f in result.fragments} <= expected


def test_a_filter_of_negated_literals_is_estimated_from_degrees(graph: ThalabusGraph) -> None:
    query = '"asylum" AND NOT COUNTRY_OF_ORIGIN=IQ AND NOT CHARACTER=Jane'
    result, steps, pushed = _profiled(graph, query)
    assert pushed
    (count,) = [s for s in steps if s["kind"] == "category_count"]
    expected = EVERY_DOCUMENT - IQ - JANE
    assert count["documents"] == len(EVERY_DOCUMENT) - max(len(IQ), len(JANE)) >= len(expected)
    assert count["estimate"].startswith("upper bound")
    reference, _ = graph.evaluate(parse(query), reference=True)
    assert result.fragments and {f.documentid for f in result.fragments} <= expected
    _assert_same_as_reference(result.fragments, reference, query)


def test_a_filter_over_an_or_of_phrases_is_one_pattern_in_each(graph: ThalabusGraph) -> None:
    """``("p" OR "q") AND F`` runs as ``("p" AND F) OR ("q" AND F)``: nothing listed, the
    filter checked as a pattern by both phrases' searches, the reference's answer."""
    query = '("asylum" OR "a cat at home") AND NOT COUNTRY_OF_ORIGIN=IQ'
    result, steps, pushed = _profiled(graph, query)
    assert not any(s["kind"] in ("category", "universe") for s in steps)  # nothing listed
    phrases = {s.get("phrase") for s in steps if "category_pattern" in s}
    assert phrases >= {"asylum", "a cat at home"}
    assert pushed and all(p == {"name": "COUNTRY_OF_ORIGIN", "values": ["IQ"], "negated": True}
                          for p in pushed)
    reference, _ = graph.evaluate(parse(query), reference=True)
    assert result.fragments and not {f.documentid for f in result.fragments} & IQ
    _assert_same_as_reference(result.fragments, reference, query)


def test_a_chain_of_filters_is_one_pattern_in_its_phrase(graph: ThalabusGraph) -> None:
    chain = '"asylum" AND DECISION=granted AND NOT COUNTRY_OF_ORIGIN=SY'
    result, steps, pushed = _profiled(graph, chain)
    assert pushed and all(pattern == {"any_of": [
        [{"name": "DECISION", "values": ["granted"]},
         {"name": "COUNTRY_OF_ORIGIN", "values": ["SY"], "negated": True}]]} for pattern in pushed)
    # neither the universe of the NOT nor the category's documents were listed
    assert not any(s["kind"] == "universe" for s in steps)
    assert not any(s.get("cypher") == "explain_category_documents" for s in steps)
    expected = docs_where(lambda d: has("DECISION", "granted")(d)
                          and not has("COUNTRY_OF_ORIGIN", "SY")(d))
    assert result.fragments and {f.documentid for f in result.fragments} <= expected
    reference, _ = graph.evaluate(parse(chain), reference=True)
    _assert_same_as_reference(result.fragments, reference, chain)
    grouped = graph.query('"asylum" AND (DECISION=granted AND NOT COUNTRY_OF_ORIGIN=SY)',
                          return_documents=False)
    assert grouped.fragments == result.fragments


def test_a_chain_keeps_its_form_when_each_operand_is_reranked(graph: ThalabusGraph) -> None:
    """Branch reranking reranks every AND operand with its own clauses, so moving the
    filters would give a chain of two phrases other operands: its plan is the query as
    written."""
    chain = '"asylum" AND "war" AND DECISION=granted AND NOT COUNTRY_OF_ORIGIN=SY'
    plain = graph.query(chain, return_documents=False, profile=True)
    reranked = graph.query(chain, return_documents=False, profile=True,
                           automatically_rerank=True)
    assert plain.plan is not None and reranked.plan is not None
    assert plain.plan["tree"]["query"] == (
        '"asylum" AND (DECISION=granted AND NOT COUNTRY_OF_ORIGIN=SY) AND "war"')
    assert reranked.plan["tree"]["query"] == chain


# --- the parent-dataset scope as a pattern -----------------------------------------------------
@pytest.fixture(scope="module")
def jane_dataset(graph: ThalabusGraph) -> str:
    """A dataset of the CHARACTER=Jane documents (category stubs), the parent of a scope."""
    return graph.query("CHARACTER=Jane", create_dataset=True, session="push2").dataset_ids[0]


def _spy_reads(graph: ThalabusGraph, monkeypatch: pytest.MonkeyPatch
               ) -> list[tuple[str, dict[str, Any]]]:
    """Record the name and parameters of every named read the engine makes (the reads still
    run on the real server)."""
    seen: list[tuple[str, dict[str, Any]]] = []
    for method in ("read", "read_profiled"):
        real = getattr(graph.db, method)

        def spy(name: str, /, *, _real: Any = real, **params: Any) -> Any:
            seen.append((name, params))
            return _real(name, **params)

        monkeypatch.setattr(graph.db, method, spy)
    return seen


# NOT TAG=cleaning keeps docid-2005 of the Jane dataset: under NOT TAG=home (every Jane
# document's) the count within the scope is 0 and no search runs at all
@pytest.mark.parametrize("query", ['"cat"', '"cat" AND NOT TAG=cleaning', "'Jane'",
                                   '"a tree" AND (CHARACTER=Bob OR TAG=home)'])
def test_the_dataset_scope_is_a_pattern_not_a_list(
        graph: ThalabusGraph, jane_dataset: str, monkeypatch: pytest.MonkeyPatch,
        query: str) -> None:
    seen = _spy_reads(graph, monkeypatch)
    result = graph.query(query, subset_of_datasetids=[jane_dataset], return_documents=False,
                         profile=True)
    assert result.plan is not None
    assert {f.documentid for f in result.fragments} <= JANE
    # No read lists the datasets' documents, and no search is given a list of document ids
    # standing for the scope: every search statement gets the datasets as $datasetids.
    assert not [name for name, _ in seen if name.startswith("universe_")]
    searches = [(name, params) for name, params in seen
                if name in ("search_vector", "search_vector_exact", "search_fulltext",
                            "search_phrase_filtered")]
    assert searches
    assert all(params["datasetids"] == [jane_dataset] for _, params in searches)
    assert all(params["documentids"] is None for _, params in searches)
    steps = _steps(result.plan["tree"])
    semantic = [s for s in steps if s["kind"] == "semantic"]
    assert all(s["dataset_pattern"] == [jane_dataset] for s in semantic)
    assert all(s["filtered_documents"] <= len(JANE) for s in semantic)
    explained = graph.explain(query, subset_of_datasetids=[jane_dataset])
    planned = [s for s in _steps(explained["plan"]) if s["kind"] == "semantic"]
    assert all(s["dataset_pattern"] == [jane_dataset] and s["params"]["documentids"] is None
               and s["params"]["datasetids"] == [jane_dataset] for s in planned)


def test_not_within_the_dataset_scope_and_an_ontology(graph: ThalabusGraph) -> None:
    """A NOT within the dataset scope is the scope's documents minus the operand's, and the
    scope and ontology patterns combine (the universe is read with both patterns)."""
    tagged = graph.query("TAG=home OR CHARACTER=Jane", create_dataset=True,
                         session="push2").dataset_ids[0]
    scope = docs_where(lambda d: has("TAG", "home")(d) or has("CHARACTER", "Jane")(d))
    found = graph.query("NOT CHARACTER=Jane", subset_of_datasetids=[tagged])
    assert found.documents is not None
    assert {d.documentid for d in found.documents} == scope - JANE
    both = graph.query("NOT CHARACTER=Bob", subset_of_datasetids=[tagged],
                       ontology_id="stories")
    assert both.documents is not None
    assert {d.documentid for d in both.documents} == \
        (scope & STORIES) - docs_where(has("CHARACTER", "Bob"))


IQ_ONLY = CategoryPattern("COUNTRY_OF_ORIGIN", ("IQ",))
NOT_IQ = CategoryPattern("COUNTRY_OF_ORIGIN", ("IQ",), negated=True)
IQ_OR_JANE = FilterPattern("", (), conjunctions=(
    (IQ_ONLY,), (CategoryPattern("CHARACTER", ("Jane",)),)))
NEITHER_IQ_NOR_JANE = FilterPattern("", (), conjunctions=(
    (NOT_IQ, CategoryPattern("CHARACTER", ("Jane",), negated=True)),))
EVERY_DOCUMENT = docs_where(lambda d: True)


@pytest.mark.parametrize(("ontology", "pattern", "expected"), [
    (None, IQ_ONLY, len(IQ)),
    ("asylum", IQ_ONLY, len(IQ & ASYLUM)),
    ("asylum", NOT_IQ, len(ASYLUM - IQ)),
    # a filter with seeds, within an ontology too: its seed values' degrees (an upper bound)
    ("stories", IQ_OR_JANE, len(IQ) + len(JANE)),
    # a filter without seeds, unscoped: the documents less its largest excluded value's (an
    # upper bound, no walk over every document); within an ontology, exact
    (None, NEITHER_IQ_NOR_JANE, len(EVERY_DOCUMENT) - max(len(IQ), len(JANE))),
    ("asylum", NEITHER_IQ_NOR_JANE, len(ASYLUM - IQ - JANE)),
])
def test_a_pattern_counted_at_run_time_is_counted_by_the_vocabulary_statement(
        graph: ThalabusGraph, ontology: str | None, pattern: CategoryPattern,
        expected: int) -> None:
    """A pattern the vocabulary read did not count (``SearchExecutor.category_count`` without
    a preloaded count) is counted by the same statement, with no names or pairs, and gets the
    count the vocabulary read gives it: one copy of the counting rules."""
    ex = SearchExecutor(graph.db, graph.settings, graph.embedder, ontologyid=ontology)
    assert ex.category_count(pattern) == expected
    (step,) = ex.steps
    assert step.cypher == "category_vocabulary" and "read" not in step.detail
    preloaded = SearchExecutor(graph.db, graph.settings, graph.embedder, ontologyid=ontology)
    _, reads = check_query(graph.db, Category("COUNTRY_OF_ORIGIN", ("IQ",)), ontology,
                           patterns=[pattern])
    preloaded.preload(reads.sizes, reads.counts)
    assert preloaded.category_count(pattern) == expected
    assert preloaded.steps[0].detail["read"].startswith("with the query's vocabulary")


@settings(max_examples=examples(20), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(queries, st.sampled_from([None, "stories", "asylum"]))
def test_compiled_plan_matches_the_reference_within_a_dataset(
        graph: ThalabusGraph, jane_dataset: str, node: Node, ontology: str | None) -> None:
    scope = [jane_dataset]
    compiled, _ = graph.evaluate(node, ontology_id=ontology, subset_of_datasetids=scope)
    reference, _ = graph.evaluate(node, ontology_id=ontology, subset_of_datasetids=scope,
                                  reference=True)
    where = f"{serialize(node)} in {scope} / {ontology}"
    _assert_same_as_reference(compiled, reference, where)
    inside = JANE if ontology is None else JANE & (STORIES if ontology == "stories" else ASYLUM)
    assert {f.documentid for f in compiled} <= inside, where


# --- the fixed per-query overhead: round trips of a filtered query --------------------------


@pytest.mark.parametrize("ontology", [None, "stories"])
def test_a_filtered_query_reads_vocabulary_scope_and_counts_in_one_round_trip(
        graph: ThalabusGraph, monkeypatch: pytest.MonkeyPatch, ontology: str | None) -> None:
    graph.queries.vocabulary.seen.clear()  # the query reads its vocabulary for the first time
    # the text languages and the filtered indexes' state are read at most once a minute: read
    # now and kept for the test, so a slow suite does not see them read between its queries
    graph.queries.text_languages()
    graph.queries.in_index_filter(ontology)
    monkeypatch.setattr(graph.queries.shared.text_languages, "recheck_seconds", float("inf"))
    monkeypatch.setattr(graph.queries.shared.in_index, "recheck_seconds", float("inf"))
    seen = spy_read_transactions(graph, monkeypatch)
    result = graph.query('"cat" AND CHARACTER=Jane', ontology_id=ontology)
    assert result.documents and {d.documentid for d in result.documents} <= JANE
    assert all(d.title for d in result.documents)  # details came with the searches
    # The vocabulary check also returned the node counts, the scope's size and the pushed
    # pattern's count; the searches returned their documents' details.
    assert seen.count("category_vocabulary") == 1
    assert not {"search_scope_sizes", "search_counts", "document_details"} & set(seen), seen
    assert {name for name in seen if name != "category_vocabulary"} <= {
        "search_vector_exact", "search_vector", "search_fulltext", "search_phrase",
        "search_phrase_filtered", "search_fulltext_candidates",
        "document_languages", "search_phrase_procedure"}, seen
    # asked again, the first statement carries the read: one round trip less, same answer
    first = list(seen)
    seen.clear()
    again = graph.query('"cat" AND CHARACTER=Jane', ontology_id=ontology)
    assert "category_vocabulary" not in seen and len(seen) == len(first) - 1, seen
    assert seen[0].endswith("(with category_vocabulary)")
    assert [d.to_dict() for d in again.documents or []] == [
        d.to_dict() for d in result.documents]


# --- the index path with patterns (the sample is small enough for exact search) -------------


@pytest.fixture
def index_path(graph: ThalabusGraph, monkeypatch: pytest.MonkeyPatch) -> ThalabusGraph:
    """The sample graph with every restricted vector search on the index path, asked for every
    fragment, so its answer is exact and comparable with the reference's: the patterns of
    ``search_vector`` (document reached along IN_DOCUMENT, a paragraph through its chapter)
    are what is checked. (The sample is small enough for the exact path everywhere, so the
    path choice is overridden.)"""
    force_index_path(monkeypatch, lambda scope, src: scope.node_counts().get(src.source, 0),
                     "forced by the test: every fragment")
    return graph


def test_the_index_path_is_taken_with_its_patterns(index_path: ThalabusGraph) -> None:
    result = index_path.query('"asylum" AND NOT COUNTRY_OF_ORIGIN=IQ', ontology_id="asylum",
                              return_documents=False, profile=True)
    assert result.plan is not None
    searches = [s for s in _steps(result.plan["tree"])
                if s["kind"] == "semantic" and "category_pattern" in s]
    assert {s["source"] for s in searches if s["path"] == "index"} >= {"chapters",
                                                                        "paragraphs"}
    assert {f.source for f in result.fragments} >= {"chapters", "paragraphs"}
    assert not {f.documentid for f in result.fragments} & IQ
    assert {f.documentid for f in result.fragments} <= ASYLUM


@pytest.mark.parametrize("query", [
    '"asylum" AND COUNTRY_OF_ORIGIN=IQ', '"cat" AND NOT CHARACTER=Jane',
    '"asylum" AND (COUNTRY_OF_ORIGIN=IQ OR (DECISION=granted AND NOT COUNTRY_OF_ORIGIN=SY))'])
def test_the_index_path_with_a_pattern_matches_the_unscoped_reference(
        index_path: ThalabusGraph, query: str) -> None:
    # Unscoped, the reference searches without any pattern: paragraphs reach their document
    # through their chapter in the compiled plan's search only.
    compiled, _ = index_path.evaluate(query)
    reference, _ = index_path.evaluate(query, reference=True)
    assert "paragraphs" in {f.source for f in compiled}
    assert [(f.fragmentid, round(f.score, 6), f.contributions) for f in compiled] == [
        (f.fragmentid, round(f.score, 6), f.contributions) for f in reference]


@pytest.mark.parametrize(("query", "ontology"), [
    ('"asylum" AND COUNTRY_OF_ORIGIN=IQ', "asylum"), ('"cat" AND NOT CHARACTER=Jane', None),
    ('"cat" AND (CHARACTER=Jane OR TAG=home)', "stories"), ('"cat" AND "tree"', None)])
def test_a_restricted_text_search_keeps_the_same_hits_on_either_path(
        graph: ThalabusGraph, monkeypatch: pytest.MonkeyPatch, query: str,
        ontology: str | None) -> None:
    # The sample's restrictions are small: text hits are looked up among the restricted
    # documents' fragments; forced onto the index path, each hit's patterns are checked.
    # Each path runs in the phrase's batched call and, alone, as its own statement (the
    # engine's statements: the procedure plugin runs the same batch inside the server).
    graph = ThalabusGraph(graph.db, settings=graph.settings.replace(procedures="off"),
                          embedder=graph.embedder)
    runs = {}
    for batching in (True, False):
        if not batching:
            monkeypatch.setattr(executor, "batched", lambda plan: ())
        runs["candidates", batching] = graph.query(query, ontology_id=ontology,
                                                   return_documents=False, profile=True)
        with monkeypatch.context() as forced:
            forced.setattr(cost, "choose_text_path", lambda *args: ("index", "forced"))
            runs["index", batching] = graph.query(query, ontology_id=ontology,
                                                  return_documents=False, profile=True)
    first = runs["candidates", True]
    assert first.fragments
    for (path, batching), result in runs.items():
        assert [(f.fragmentid, f.score, f.contributions) for f in result.fragments] == [
            (f.fragmentid, f.score, f.contributions) for f in first.fragments], (path, batching)
        assert result.plan is not None
        texts = [s for s in _steps(result.plan["tree"])
                 if s["kind"] == "text" and "filtered_documents" in s]
        assert texts and {s["path"] for s in texts} == {path}
        statement = ("search_fulltext_candidates" if path == "candidates"
                     else "search_fulltext")
        cyphers = {s["cypher"] for s in texts}
        # a scope's fit searches (the phrase's unrestricted candidates) run on their own
        assert cyphers <= {"search_phrase_filtered", statement}
        assert ("search_phrase_filtered" in cyphers) == batching, (path, batching)


# A scored side whose phrase hits all fall outside the other side's documents
MISSED_PHRASE = And(Semantic("religious conversion"),
                    Or(Text("Jane"), Category("COUNTRY_OF_ORIGIN", ("IQ",))))


@settings(max_examples=examples(20), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(queries, st.sampled_from([None, "stories", "asylum"]))
@example(MISSED_PHRASE, None)
# a one-word phrase restricted to the other side's documents: its gate reads the scope's
# text hits of the phrase, as the unrestricted phrase's does
@example(And(Semantic("religious conversion"), Semantic("kitchen")), "asylum")
def test_the_index_path_with_patterns_matches_the_reference(
        index_path: ThalabusGraph, node: Node, ontology: str | None) -> None:
    compiled, _ = index_path.evaluate(node, ontology_id=ontology)
    reference, _ = index_path.evaluate(node, ontology_id=ontology, reference=True)
    where = f"{serialize(node)} in {ontology}"
    _assert_same_as_reference(compiled, reference, where)


def test_a_side_whose_phrase_hits_fall_outside_the_other_side_stays_scored(
        graph: ThalabusGraph) -> None:
    # "Jane" is found only in stories, "religious conversion" only among asylum decisions:
    # run within the semantic side's documents, the OR holds only its category stubs. Its
    # whole result has the text hits, so it is a scored side (the stubs take part, scores
    # are geometric means), not a filter that leaves the semantic scores unchanged.
    jane, _ = graph.evaluate(Text("Jane"))
    assert jane and {f.documentid for f in jane} <= STORIES
    compiled, _ = graph.evaluate(MISSED_PHRASE)
    reference, _ = graph.evaluate(MISSED_PHRASE, reference=True)
    _assert_same_as_reference(compiled, reference, serialize(MISSED_PHRASE))
    semantic = {f.fragmentid: f.score for f in graph.evaluate(MISSED_PHRASE.left)[0]}
    stubs = [f for f in compiled if f.is_stub]
    assert stubs and {f.documentid for f in compiled} <= IQ
    scored = [f for f in compiled if not f.is_stub]
    assert scored and all(math.isclose(f.score, math.sqrt(semantic[f.fragmentid]), abs_tol=1e-5)
                          for f in scored)
