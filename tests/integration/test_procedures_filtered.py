"""A filtered phrase on the procedure plugin answers what the engine's statements answer: on the
committed XQuAD-R slice with categories of several selectivities, a phrase AND / AND NOT /
OR-of categories, a required filter and a phrase restricted to the other AND side's
documents give, through the plugin (``procedures`` on) and the statements (``off``), the same
fragments in the same order with scores within 1e-6, the same documents and warnings, on each
vector path the plan can choose (exact, the over-fetched index, its exact fallback) and both
full-text paths. ``CALL thalabus.phrase`` takes a filter as values from Cypher."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import pytest

from benchmarks.procedures_conformance import difference, settled
from benchmarks.quality import PrecomputedEmbedder, documents
from tests.integration.test_procedures_phrase import (
    engine_fragments,
    plugin_fragments,
)
from tests.integration.test_procedures_plugin import _not_the_launchers
from tests.integration.test_quality_smoke import xquad_slice
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.graph.database import Database
from thalabus_graph.query.serialize import quote_double
from thalabus_graph.results.query_result import QueryResult

pytestmark = pytest.mark.integration

FILTERS = ("BUCKET=a", "(BUCKET=a OR BUCKET=b)", "NOT BUCKET=a", "PARITY=even AND NOT BUCKET=c",
           "BUCKET=none")
"""Category filters of 1/4, 1/2, 3/4, 1/4 and no documents (``bucketed``)."""


def bucketed(db: Database, settings: Settings) -> tuple[ThalabusGraph, dict[str, list[float]]]:
    """The slice ingested into ``db`` with categories (BUCKET a-d by turns, PARITY even / odd),
    on the engine's statements, and its questions' vectors."""
    corpus = xquad_slice()
    assert corpus.query_vectors is not None
    embedder = PrecomputedEmbedder(corpus.query_vectors,
                                   dimensions=settings.embedding_dimensions)
    docs: list[dict[str, Any]] = []
    for i, doc in enumerate(documents(corpus)):
        docs.append({**doc, "categories": {"BUCKET": "abcd"[i % 4],
                                           "PARITY": ("even", "odd")[i % 2]}})
    graph = ThalabusGraph(db, settings=settings.replace(procedures="off"), embedder=embedder)
    graph.ingest(docs, strict=True, progress=False, embed=False)
    return graph, {q: [float(x) for x in v] for q, v in corpus.query_vectors.items()}


def both(statements: ThalabusGraph, query: str, limit: int | None, **kwargs: Any
         ) -> tuple[QueryResult, QueryResult]:
    """The query on the engine's statements and on the plugin, settled alike."""
    plugin = ThalabusGraph(statements.db, settings=statements.settings.replace(procedures="on"),
                           embedder=statements.embedder)
    answers: dict[ThalabusGraph, QueryResult] = {}

    def ask(graph: ThalabusGraph) -> list[tuple[str, float, str]]:
        answers[graph] = graph.query(query, limit=limit, **kwargs)
        return engine_fragments(answers[graph].fragments)

    settled(partial(ask, statements), partial(ask, plugin))
    return answers[statements], answers[plugin]


def assert_alike(query: str, ours: QueryResult, theirs: QueryResult) -> None:
    why = difference(engine_fragments(ours.fragments), engine_fragments(theirs.fragments))
    assert why is None, (query, why)
    assert [d.documentid for d in ours.documents] == [d.documentid for d in theirs.documents]
    assert [d.properties for d in ours.documents] == [d.properties for d in theirs.documents]
    assert [w.to_dict() for w in ours.warnings] == [w.to_dict() for w in theirs.warnings]


def on_plugin(graph: ThalabusGraph, query: str, **kwargs: Any) -> list[dict[str, Any]]:
    """The profiled steps of the query's phrase on the plugin."""
    plugin = ThalabusGraph(graph.db, settings=graph.settings.replace(procedures="on"),
                           embedder=graph.embedder)
    plan = plugin.query(query, profile=True, **kwargs).plan
    assert plan is not None
    found: list[dict[str, Any]] = []
    stack: list[Any] = [plan]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("kind") in ("semantic", "text") and "cypher" in item:
                found.append(item)
            stack += item.values()
        elif isinstance(item, list):
            stack += item
    return found


@pytest.mark.parametrize("paths", ["planned", "index", "text index"])
def test_a_filtered_phrase_on_the_plugin_answers_as_on_the_statements(
        clean_db: Database, db_settings: Settings, paths: str) -> None:
    reason = _not_the_launchers()
    if reason is not None:
        pytest.skip(reason)
    settings = {"planned": db_settings,
                # every vector search on the over-fetched index, asked again or exactly
                # when its filter leaves too few
                "index": db_settings.replace(exact_search_max_candidates=0, vector_min_k=4,
                                             vector_overfetch_factor=1.0, top_n_chapters=3),
                "text index": db_settings.replace(text_lookup_max_fragments=0)}[paths]
    statements, vectors = bucketed(clean_db, settings)
    compared = 0
    for limit in (None, 4):
        for n, phrase in enumerate(list(vectors)[::9]):
            query = f"{quote_double(phrase)} AND {FILTERS[n % len(FILTERS)]}"
            ours, theirs = both(statements, query, limit)
            assert_alike(query, ours, theirs)
            compared += len(ours.fragments)
    steps = on_plugin(statements, f"{quote_double(next(iter(vectors)))} AND BUCKET=b")
    assert steps and all(s.get("cypher") == "search_phrase_procedure" for s in steps)
    if paths == "index":  # the plugin asks a short over-fetch again, or exactly
        assert any(s.get("path") == "index" for s in steps), json.dumps(steps)
        again = [s for f in FILTERS for s in on_plugin(
            statements, f"{quote_double(next(iter(vectors)))} AND {f}")
            if "overfetch_k" in s or "exact fallback" in str(s.get("reason"))]
        assert again
    assert compared > 40


def test_a_required_filter_and_an_and_side_run_on_the_plugin_as_on_the_statements(
        clean_db: Database, db_settings: Settings) -> None:
    reason = _not_the_launchers()
    if reason is not None:
        pytest.skip(reason)
    statements, vectors = bucketed(clean_db, db_settings)
    phrases = list(vectors)[2::11]
    for phrase in phrases:
        ours, theirs = both(statements, quote_double(phrase), None, required_filter="BUCKET=c")
        assert_alike(phrase, ours, theirs)
        assert {d.categories["BUCKET"][0] for d in theirs.documents} <= {"c"}
    other = quote_double(phrases[1])
    query = f"{quote_double(phrases[0])} AND {other}"  # restricted to the other side's
    ours, theirs = both(statements, query, None)
    assert_alike(query, ours, theirs)
    steps = on_plugin(statements, quote_double(phrases[0]), required_filter="BUCKET=c")
    assert steps and all(s.get("cypher") == "search_phrase_procedure" for s in steps)


def test_thalabus_phrase_takes_a_filter_from_cypher(clean_db: Database,
                                                     db_settings: Settings) -> None:
    """From Cypher a filter is searched exactly over its documents: the fragments are the
    unfiltered phrase's fragments of those documents, with their scores (a filter never
    changes a score), and a malformed filter is an error naming the option."""
    reason = _not_the_launchers()
    if reason is not None:
        pytest.skip(reason)
    statements, vectors = bucketed(clean_db, db_settings)
    phrase, vector = list(vectors.items())[5]
    options = {"calibration": "multilingual-e5-small"}
    whole = plugin_fragments(clean_db, statements.settings, phrase, vector, options)
    bucket = {r["documentid"] for r in clean_db.read_text(
        "MATCH (d:Document)-[:HAS_CATEGORY]->(:Category {name: 'BUCKET', value: 'a'}) "
        "RETURN d.documentid AS documentid", {}, plain=True, what="bucket a")}
    filtered = plugin_fragments(clean_db, statements.settings, phrase, vector, {
        **options, "filter": [[{"name": "BUCKET", "values": ["a"], "negated": False}]]})
    documents = {r["fragmentid"]: r["documentid"] for r in clean_db.read_text(
        "MATCH (f:Chapter) RETURN f.fragmentid AS fragmentid, f.documentid AS documentid",
        {}, plain=True, what="chapters")}
    assert filtered and all(documents[f] in bucket for f, _, _ in filtered)
    scores = {f: s for f, s, _ in whole}
    assert all(abs(scores[f] - s) < 1e-9 for f, s, _ in filtered if f in scores)
    with pytest.raises(Exception, match="filter"):
        plugin_fragments(clean_db, statements.settings, phrase, vector,
                         {**options, "filter": [{"name": "BUCKET"}]})
