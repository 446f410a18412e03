"""Query evaluation on the sample corpus against the real Neo4j: which documents each query
must return, scoping, special characters, and the compiled plan agreeing with the reference."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.integration.sample import docs_where, has, load_sample
from tests.integration.sample_queries import FILTER_CASES, SPECIAL_TEXTS
from tests.support.contributions import same_contributions
from tests.support.examples import examples
from thalabus_graph import ThalabusGraph, ThalabusSyntaxError, serialize
from thalabus_graph.graph.database import Database
from thalabus_graph.query import And, Category, Node, Not, Or, Semantic, Text

pytestmark = pytest.mark.integration

ALL = docs_where(lambda d: True)
ASYLUM = docs_where(lambda d: d.get("ontology") == "asylum")
STORIES = docs_where(lambda d: d.get("ontology") == "stories")
IQ = docs_where(has("COUNTRY_OF_ORIGIN", "IQ"))
SY = docs_where(has("COUNTRY_OF_ORIGIN", "SY"))
GRANTED = docs_where(has("DECISION", "granted"))
REJECTED = docs_where(has("DECISION", "rejected"))


@pytest.fixture(scope="module")
def graph(db: Database) -> ThalabusGraph:
    return load_sample(db)


def docs(graph: ThalabusGraph, query: str, **kwargs: object) -> list[str]:
    result = graph.query(query, **kwargs)  # type: ignore[arg-type]
    assert result.documents is not None
    return [d.documentid for d in result.documents]


# --- categories, boolean algebra of filters -----------------------------------------------
@pytest.mark.parametrize(("query", "expected"), FILTER_CASES)
def test_filters_return_exactly_the_matching_documents(graph: ThalabusGraph, query: str,
                                                       expected: set[str]) -> None:
    result = graph.query(query, return_documents=False)
    assert {f.documentid for f in result.fragments} == expected
    assert all(f.is_stub and f.score == 1.0 and f.text is None for f in result.fragments)


def test_not_is_scoped_to_the_ontology(graph: ThalabusGraph) -> None:
    assert set(docs(graph, "NOT COUNTRY_OF_ORIGIN=IQ", ontology_id="asylum")) == ASYLUM - IQ
    assert set(docs(graph, "NOT COUNTRY_OF_ORIGIN=IQ")) == ALL - IQ


# --- semantic and text ---------------------------------------------------------------------
def test_a_german_query_finds_french_and_english_documents(graph: ThalabusGraph) -> None:
    top = docs(graph, '"Konversion zum Christentum"')[:4]
    assert {"docid-1002", "docid-1003"} <= set(top)


def test_semantic_and_filter_returns_best_fragments_of_filtered_documents(
        graph: ThalabusGraph) -> None:
    found = docs(graph, '"religious conversion to Christianity" AND COUNTRY_OF_ORIGIN=AF')
    assert found and set(found) <= docs_where(has("COUNTRY_OF_ORIGIN", "AF"))
    assert found[0] == "docid-1003"
    result = graph.query('"asylum seeker" AND COUNTRY_OF_ORIGIN=IQ', return_documents=False)
    assert result.fragments and {f.documentid for f in result.fragments} <= IQ
    assert all(not f.is_stub for f in result.fragments)


def test_or_of_two_stories(graph: ThalabusGraph) -> None:
    top = docs(graph, '"a cat climbs a tall tree" OR "a squirrel friend"')[:2]
    assert set(top) == {"docid-2001", "docid-2002"}
    assert docs(graph, '("a cat climbs a tall tree" OR "a squirrel friend") AND '
                       'CHARACTER=Sammy') == ["docid-2002"]


def test_and_of_two_phrases_ranks_the_document_having_both(graph: ThalabusGraph) -> None:
    assert docs(graph, '"kitchen floor" AND "cleanup"')[0] == "docid-2003"


def test_text_search_and_case_sensitive_text(graph: ThalabusGraph) -> None:
    assert docs(graph, "'kitchen floor'") == ["docid-2003"]
    janes = docs_where(lambda d: any("Jane's" in c for c in d.get("chapters", [])))
    assert set(docs(graph, "'Jane\\'s'")) == janes
    assert docs(graph, "@'C++'") == ["docid-2005"]
    assert docs(graph, "@'c++'") == []
    top = graph.query("'kitchen floor'", return_documents=False).fragments
    assert top[0].score == 1.0


@pytest.mark.parametrize("query", SPECIAL_TEXTS)
def test_special_characters_in_user_text_are_inert(graph: ThalabusGraph, query: str) -> None:
    graph.query(query)


def test_case_sensitive_and_keyword(graph: ThalabusGraph) -> None:
    expected = docs_where(lambda d: any(" AND " in c for c in d.get("chapters", [])))
    assert set(docs(graph, "@' AND '")) == expected


def test_syntax_errors_reach_the_caller(graph: ThalabusGraph) -> None:
    with pytest.raises(ThalabusSyntaxError) as info:
        graph.query('"x" AND')
    assert info.value.position == 7


# --- scoping ------------------------------------------------------------------------------
def test_ontology_scope_applies_to_every_search(graph: ThalabusGraph) -> None:
    assert set(docs(graph, '"adventure"', ontology_id="stories")) <= STORIES
    assert set(docs(graph, "", ontology_id="stories")) == STORIES


def test_dataset_scope_and_both_scopes(graph: ThalabusGraph) -> None:
    jane = graph.query("CHARACTER=Jane", create_dataset=True, session="scope")
    parent = jane.dataset_ids[0]
    janes = docs_where(has("CHARACTER", "Jane"))
    assert set(docs(graph, '"cat"', subset_of_datasetids=[parent])) <= janes
    assert set(docs(graph, "", subset_of_datasetids=[parent])) == janes
    assert docs(graph, "", subset_of_datasetids=[parent], ontology_id="asylum") == []
    assert set(docs(graph, "NOT TAG=computers", subset_of_datasetids=[parent])) == \
        janes - docs_where(has("TAG", "computers"))


# --- datasets ------------------------------------------------------------------------------
def test_dataset_holds_the_raw_fragments_and_stubs_point_at_documents(
        graph: ThalabusGraph) -> None:
    result = graph.query('"Bob the cat" OR CHARACTER=Sammy', return_documents=True,
                         create_dataset=True, session="raw")
    (datasetid,) = result.dataset_ids
    members = graph.datasets.members(datasetid)
    assert len(members) == len(result.fragments)
    assert {m.fragmentid for m in members} == {f.fragmentid for f in result.fragments}
    weights = {m.fragmentid: m.score for m in members}
    assert all(math.isclose(weights[f.fragmentid], f.score) for f in result.fragments)
    rows = graph.db.driver.execute_query(
        "MATCH (:Dataset {datasetid: $id})-[:AGGREGATES]->(d:Document) RETURN d.documentid AS d",
        id=datasetid, database_="neo4j").records
    stubs = {f.fragmentid for f in result.fragments if f.is_stub}
    assert {r["d"] for r in rows} == stubs


def test_rag_fragments_fast_path(graph: ThalabusGraph) -> None:
    s = graph.settings
    picked = graph.rag_fragments('"asylum"').fragments
    assert picked and len(picked) <= s.max_rag_output_frag
    per_doc: dict[str, int] = {}
    for f in picked:
        assert f.score >= s.min_reranking_score_doc
        per_doc[f.documentid] = per_doc.get(f.documentid, 0) + 1
    assert max(per_doc.values()) <= s.max_fragments_per_doc
    keys = [(-f.score, f.fragmentid) for f in picked]
    assert keys == sorted(keys)


# --- compiled plan == reference ------------------------------------------------------------
PHRASES = ["religious conversion", "cat", "military service", "Taliban", "kitchen"]
TERMS = ["Taliban", "Jane", "tree", "Iran"]
CATEGORIES = [("COUNTRY_OF_ORIGIN", ("IQ",)), ("COUNTRY_OF_ORIGIN", ("AF", "SY")),
              ("DECISION", ("granted",)), ("CHARACTER", ("Bob",)), ("TAG", ("home",))]

leaves = st.one_of(
    st.sampled_from(PHRASES).map(Semantic),
    st.sampled_from(TERMS).map(lambda t: Text(t, False)),
    st.sampled_from(CATEGORIES).map(lambda c: Category(c[0], c[1])),
)
queries = st.recursive(leaves, lambda kids: st.one_of(
    st.tuples(kids, kids).map(lambda p: And(*p)),
    st.tuples(kids, kids).map(lambda p: Or(*p)),
    kids.map(Not),
), max_leaves=4)


@settings(max_examples=examples(25), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(queries)
def test_compiled_plan_matches_the_reference(graph: ThalabusGraph, node: Node) -> None:
    # The sample corpus is smaller than every top-N, so the reference is never truncated.
    compiled, _ = graph.evaluate(node)
    reference, _ = graph.evaluate(node, reference=True)
    assert [f.fragmentid for f in compiled] == [f.fragmentid for f in reference], serialize(node)
    for a, b in zip(compiled, reference, strict=True):
        assert math.isclose(a.score, b.score, abs_tol=1e-6), serialize(node)
        assert same_contributions(a.contributions, b.contributions), (serialize(node), a, b)


def test_the_engine_as_a_retriever_inside_the_reranking_stage(graph: ThalabusGraph) -> None:
    import asyncio

    from thalabus_graph.rerank import NoReranking, RerankingRetriever
    from thalabus_graph.retriever import ThalabusRetriever

    stage = RerankingRetriever(ThalabusRetriever(graph), NoReranking(), candidates=20, top_n=5)
    found = asyncio.run(stage.retrieve('"a cat climbs a tall tree"',
                                       scope={"ontology_id": "stories"}, k=3))
    assert found.reranked and len(found.hits) == 3
    assert {h.document_id for h in found.hits} <= STORIES
    assert found.hits[0].document_id == "docid-2001"
