"""The procedure plugin answers what the engine's own statements answer: on the committed
XQuAD-R slice (90 documents in three languages, precomputed vectors), every question asked
through ``ThalabusGraph.query`` on the engine's statements (``procedures`` off), through the
engine on the plugin (``procedures`` on) and through ``CALL thalabus.phrase`` gives the same
fragments in the same order with scores within 1e-6 (``procedures_conformance.TOLERANCE``;
the same documents and warnings through the engine), with and without a limit, with every
fusion rule and on the index scale too.

The plugin is asked with what the engine decided for the phrase (its text indexes and whether
its language is held), since language detection stays in the Python engine. The test needs the
plugin, which a server the launcher starts carries (``test_procedures_plugin``).
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import pytest

from benchmarks.procedures_conformance import difference, settled
from benchmarks.quality import PrecomputedEmbedder, documents
from tests.integration.test_procedures_plugin import _not_the_launchers
from tests.integration.test_quality_smoke import xquad_slice
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.errors import ConfigurationError, GraphError
from thalabus_graph.fragments import Fragment
from thalabus_graph.graph.database import Database
from thalabus_graph.query.serialize import quote_double
from thalabus_graph.results.query_result import QueryResult
from thalabus_graph.search.languages import TextLanguages, TextLanguageState
from thalabus_graph.search.procedure import overrides

pytestmark = pytest.mark.integration


def plugin_fragments(db: Database, settings: Settings, phrase: str, vector: list[float],
                     options: dict[str, Any]) -> list[tuple[str, float, str]]:
    """(fragment id, score, source) of ``CALL thalabus.phrase``, in its order."""
    languages = TextLanguages(settings, TextLanguageState(db, 60.0))
    indexes = [list(pair) for pair in languages.choose(phrase).indexes]
    chosen = {"settings": overrides(settings), "text_indexes": indexes,
              **({"held": languages.held(phrase)} if languages.held(phrase) is not None
                 else {}), **options}
    rows = db.read_text("CALL thalabus.phrase($text, $vector, $options) "
                        "YIELD fragmentid, score, source RETURN fragmentid, score, source",
                        {"text": phrase, "vector": vector, "options": chosen}, plain=True,
                        what="thalabus.phrase")
    return [(r["fragmentid"], r["score"], r["source"]) for r in rows]


def answer(answers: dict[ThalabusGraph, QueryResult], graph: ThalabusGraph, query: str,
           limit: int | None) -> list[tuple[str, float, str]]:
    """The query's fragments through ``graph``, its whole result kept in ``answers``."""
    answers[graph] = graph.query(query, limit=limit)
    return engine_fragments(answers[graph].fragments)


def engine_fragments(fragments: list[Fragment]) -> list[tuple[str, float, str]]:
    return [(f.fragmentid, f.score, f.source) for f in fragments]


def assert_same(phrase: str, ours: list[tuple[str, float, str]],
                plugin: list[tuple[str, float, str]]) -> None:
    """The same fragments in the same order, the same sources, scores within 1e-6
    (``procedures_conformance.difference``, which the whole-split run applies too)."""
    why = difference(ours, plugin)
    assert why is None, (phrase, why)


def slice_graph(db: Database, settings: Settings) -> tuple[ThalabusGraph, dict[str, list[float]]]:
    """The slice ingested into ``db`` (a graph on the engine's statements) and its questions'
    vectors."""
    corpus = xquad_slice()
    assert corpus.query_vectors is not None
    embedder = PrecomputedEmbedder(corpus.query_vectors,
                                   dimensions=settings.embedding_dimensions)
    graph = ThalabusGraph(db, settings=settings.replace(procedures="off"), embedder=embedder)
    graph.ingest(documents(corpus), strict=True, progress=False, embed=False)
    return graph, {q: [float(x) for x in v] for q, v in corpus.query_vectors.items()}


def on_both_paths(db: Database, statements: ThalabusGraph, phrase: str
                  ) -> tuple[QueryResult, QueryResult]:
    """The phrase's query on the engine's statements and on the plugin, settled alike."""
    plugin = ThalabusGraph(db, settings=statements.settings.replace(procedures="on"),
                           embedder=statements.embedder)
    query = quote_double(phrase)
    answers: dict[ThalabusGraph, QueryResult] = {}
    settled(partial(answer, answers, statements, query, None),
            partial(answer, answers, plugin, query, None))
    return answers[statements], answers[plugin]


def test_the_plugin_phrase_is_the_engines_phrase(clean_db: Database,
                                                  db_settings: Settings) -> None:
    reason = _not_the_launchers()
    if reason is not None:
        pytest.skip(reason)
    graph, vectors = slice_graph(clean_db, db_settings)
    compared = 0
    for limit in (None, 5):
        for phrase in list(vectors)[::4]:
            options: dict[str, Any] = {"calibration": "multilingual-e5-small"}
            if limit is not None:
                options["limit"] = limit
            ours, plugin = settled(
                partial(answer, {}, graph, quote_double(phrase), limit),
                partial(plugin_fragments, clean_db, graph.settings, phrase, vectors[phrase],
                        options))
            if limit is not None:
                plugin = plugin[:len(ours)]
            assert_same(phrase, ours, plugin)
            compared += len(ours)
    assert compared > 100


@pytest.mark.parametrize("fusion", ["language-slots", "convex", "max", "rrf", "meaning only"])
def test_the_engine_on_the_plugin_answers_as_on_its_statements(
        clean_db: Database, db_settings: Settings, fusion: str) -> None:
    reason = _not_the_launchers()
    if reason is not None:
        pytest.skip(reason)
    settings = (db_settings.replace(hybrid_all_queries=False, short_query_max_words=0)
                if fusion == "meaning only" else db_settings.replace(fusion=fusion))
    statements, vectors = slice_graph(clean_db, settings)
    plugin = ThalabusGraph(clean_db, settings=statements.settings.replace(procedures="on"),
                           embedder=statements.embedder)
    compared = 0
    for limit in (None, 3):
        for phrase in list(vectors)[1::6]:
            query = quote_double(phrase)
            answers: dict[ThalabusGraph, QueryResult] = {}
            first, second = settled(partial(answer, answers, statements, query, limit),
                                    partial(answer, answers, plugin, query, limit))
            assert_same(phrase, first, second)
            ours, theirs = answers[statements], answers[plugin]
            assert [d.documentid for d in ours.documents] == \
                [d.documentid for d in theirs.documents]
            assert [d.title for d in ours.documents] == [d.title for d in theirs.documents]
            assert [w.to_dict() for w in ours.warnings] == \
                [w.to_dict() for w in theirs.warnings]
            compared += len(ours.fragments)
    steps = plugin.query(quote_double(next(iter(vectors))), profile=True).plan
    assert steps is not None and '"path": "procedure"' in json.dumps(steps)
    assert compared > 50


def test_the_plugin_reads_texts_and_languages_as_the_statements_do(
        clean_db: Database, db_settings: Settings) -> None:
    """The plugin reads each hit's properties from its node: texts cut to
    ``max_result_text_chars`` code points (characters beyond the BMP straddling the cut) and a
    document stored without a language answer as ``search_phrase``'s own reads."""
    reason = _not_the_launchers()
    if reason is not None:
        pytest.skip(reason)
    settings = db_settings.replace(max_result_text_chars=23)
    statements, vectors = slice_graph(clean_db, settings)
    phrase, vector = next(iter(vectors.items()))
    words = phrase.split()
    extra = [{"documentid": f"astral-{i}", "title": f"astral {i}",
              "chapters": [" ".join(words[:3]) + " " + "\U0001F600" * (10 + i) + "x" * i
                           + " " + " ".join(words)],
              "paragraphs": [[]], "embeddings": {f"astral-{i}-c1": vector}}
             for i in range(3)]
    statements.ingest(extra, strict=True, progress=False, embed=False)
    stored = clean_db.read_text("MATCH (d:Document) WHERE d.documentid STARTS WITH 'astral-' "
                                "RETURN d.language AS language", {}, plain=True,
                                what="astral languages")
    assert [row["language"] for row in stored] == [None] * 3
    ours, theirs = on_both_paths(clean_db, statements, phrase)
    assert [(f.fragmentid, f.text) for f in ours.fragments] == \
        [(f.fragmentid, f.text) for f in theirs.fragments]
    astral = [f.text for f in theirs.fragments if f.documentid.startswith("astral-")]
    assert len(astral) == 3
    assert all(len(text) == 23 for text in astral)  # code points, not UTF-16 units
    assert difference(engine_fragments(ours.fragments), engine_fragments(theirs.fragments)) \
        is None


def test_procedures_on_fails_on_a_server_without_the_plugin(
        clean_db: Database, db_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine's statements answer everywhere; ``on`` says when the plugin is missing,
    which this check forces by naming another plugin version than the server's."""
    from thalabus_graph.search import procedure

    monkeypatch.setattr(procedure, "expected_version", lambda: "0.0.0+000000000000")
    monkeypatch.setattr(clean_db, "plugin", None)  # read again, with that version
    graph = ThalabusGraph(clean_db, settings=db_settings.replace(procedures="on"))
    with pytest.raises(ConfigurationError, match="procedures is on"):
        graph.query('"anything"')
    assert ThalabusGraph(clean_db, settings=db_settings.replace(procedures="auto")).query(
        '"anything"').fragments == []


def test_the_plugin_reads_documents_as_the_statements_do(
        clean_db: Database, db_settings: Settings) -> None:
    """The plugin reads the returned documents' details (every property, the ontology, the
    categories) and each hit's document language from the nodes, reaching a document through
    its fragment's ``IN_DOCUMENT`` relationship and by its id where that relationship is
    missing: the documents and fragments answer as on the engine's statements."""
    reason = _not_the_launchers()
    if reason is not None:
        pytest.skip(reason)
    statements, vectors = slice_graph(clean_db, db_settings)
    phrase, vector = next(iter(vectors.items()))
    extra = [{"documentid": f"detailed-{i}", "title": f"detailed {i}", "ontology": "asylum",
              "language": "en", "court": "BVGer", "year": 2020 + i, "final": i % 2 == 0,
              "categories": {"COUNTRY": ["IQ", "SY"][: i + 1], "DECISION": "granted"},
              "chapters": [phrase + f" (case {i})"], "paragraphs": [[]],
              "embeddings": {f"detailed-{i}-c1": vector}}
             for i in range(3)]
    statements.ingest(extra, strict=True, progress=False, embed=False)
    clean_db.write_tx(lambda tx: tx.run(  # one chapter no longer leads to its document
        "MATCH (:Chapter {fragmentid: 'detailed-1-c1'})-[r:IN_DOCUMENT]->() DELETE r").consume(),
        what="cut a chapter from its document")
    ours, theirs = on_both_paths(clean_db, statements, phrase)
    assert [unscored(d.to_dict()) for d in ours.documents] == \
        [unscored(d.to_dict()) for d in theirs.documents]
    assert [d.score for d in ours.documents] == \
        pytest.approx([d.score for d in theirs.documents], abs=1e-6)
    detailed = [d for d in theirs.documents if d.documentid.startswith("detailed-")]
    assert len(detailed) == 3
    assert all(d.ontology == "asylum" and d.properties["court"] == "BVGer"
               and d.categories["DECISION"] == ["granted"] for d in detailed)
    assert difference(engine_fragments(ours.fragments), engine_fragments(theirs.fragments)) \
        is None


def unscored(document: dict[str, Any]) -> dict[str, Any]:
    """A document's JSON without its scores and its fragments' (compared within 1e-6)."""
    return {**{k: v for k, v in document.items() if k != "score"},
            "fragments": [{k: v for k, v in f.items() if k != "score"}
                          for f in document["fragments"]]}


@pytest.mark.parametrize("options, named", [
    ({"calibration": "multilingual-e5-smal"}, "calibration"),
    ({"text_indexes": [["chapter", "chapters_fulltext"]]}, "text_indexes"),
    ({"text_indexes": "chapters_fulltext"}, "text_indexes"),
    ({"text_indexes": [["chapters", "no_such_index"]]}, "no_such_index"),
    ({"limt": 10}, "limt"),
    ({"limit": "ten"}, "limit"),
    ({"settings": {"min_score": "x"}}, "min_score"),
    ({"settings": {"max_result_text_chars": -1}}, "max_result_text_chars"),
    ({"settings": {"hybrid_all_queries": "true"}}, "hybrid_all_queries"),
    ({"settings": {"fusion": "best"}}, "fusion"),
    ({"settings": {"embedder_model": 5}}, "embedder_model"),
    ({"filter": [[{"name": "K", "values": ["v"]}]],
      "searches": [{"kind": "index", "source": "users", "index": "typical_rag", "k": 50}]},
     "source 'users'"),
    ({"filter": [[{"name": "K", "values": ["v"]}]],
      "searches": [{"kind": "index", "source": "chapters", "k": -5, "top_n": 10}]}, "'k'"),
    ({"filter": [[{"name": "K", "values": ["v"]}]],
      "searches": [{"kind": "text", "source": "chapters", "index": "migration_lock", "k": 9}]},
     "migration_lock"),
    ({"filter": [[{"name": "K", "values": ["v"]}]],
      "searches": [{"kind": "scan", "source": "chapters"}]}, "kind 'scan'"),
    ({"filter": [[{"name": "K", "values": ["v"]}]],
      "searches": [{"kind": "exact", "source": "chapters", "top_n": 5}] * 17}, "more than 16"),
])
def test_a_bad_option_is_an_error_naming_it(clean_db: Database, db_settings: Settings,
                                            options: dict[str, Any], named: str) -> None:
    """From Cypher nothing decides an option for the caller: a misspelt calibration or an
    index the graph lacks would otherwise change the answer in silence."""
    reason = _not_the_launchers()
    if reason is not None:
        pytest.skip(reason)
    vector = [1.0] + [0.0] * (db_settings.embedding_dimensions - 1)
    with pytest.raises(GraphError, match=named):
        clean_db.read_text("CALL thalabus.phrase('kitchen floor', $vector, $options) "
                           "YIELD fragmentid RETURN fragmentid",
                           {"vector": vector, "options": options}, what="thalabus.phrase")


def test_a_phrase_is_bounded_as_the_query_language_bounds_it(clean_db: Database,
                                                               db_settings: Settings) -> None:
    reason = _not_the_launchers()
    if reason is not None:
        pytest.skip(reason)
    vector = [1.0] + [0.0] * (db_settings.embedding_dimensions - 1)
    with pytest.raises(GraphError, match="max_phrase_chars"):
        clean_db.read_text("CALL thalabus.phrase($text, $vector, {}) YIELD fragmentid "
                           "RETURN fragmentid", {"text": "floor " * 6000, "vector": vector},
                           what="thalabus.phrase")
