"""``thalabus.phrase`` answers what the engine's phrase answers: on the committed XQuAD-R
slice (90 documents in three languages, precomputed vectors), every question asked through
``ThalabusGraph.query`` and through ``CALL thalabus.phrase`` on the same graph gives the same
fragments in the same order with scores within ``TOLERANCE``, with and without a limit, and
on the index scale (no calibration) too.

The plugin is asked with what the engine decided for the phrase (its text indexes and whether
its language is held), since language detection stays in the Python engine. The test needs the
plugin, which a server the launcher starts carries (``test_procedures_plugin``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from benchmarks.quality import PrecomputedEmbedder, documents
from tests.integration.test_procedures_plugin import _not_the_launchers
from tests.integration.test_quality_smoke import xquad_slice
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.fragments import Fragment
from thalabus_graph.graph.database import Database
from thalabus_graph.query.serialize import quote_double
from thalabus_graph.search.languages import TextLanguages, TextLanguageState
from thalabus_graph.settings_values import is_secret

pytestmark = pytest.mark.integration

TOLERANCE = 1e-6


def plugin_fragments(db: Database, settings: Settings, phrase: str, vector: list[float],
                     options: dict[str, Any]) -> list[tuple[str, float, str]]:
    """(fragment id, score, source) of ``CALL thalabus.phrase``, in its order."""
    languages = TextLanguages(settings, TextLanguageState(db, 60.0))
    defaults = Settings()
    changed = {f.name: getattr(settings, f.name) for f in dataclasses.fields(Settings)
               if isinstance(getattr(settings, f.name), bool | int | float | str)
               and getattr(settings, f.name) != getattr(defaults, f.name)
               and not is_secret(f.name)}
    indexes = [list(pair) for pair in languages.choose(phrase).indexes]
    chosen = {"settings": changed, "text_indexes": indexes,
              **({"held": languages.held(phrase)} if languages.held(phrase) is not None
                 else {}), **options}
    rows = db.read_text("CALL thalabus.phrase($text, $vector, $options) "
                        "YIELD fragmentid, score, source RETURN fragmentid, score, source",
                        {"text": phrase, "vector": vector, "options": chosen}, plain=True,
                        what="thalabus.phrase")
    return [(r["fragmentid"], r["score"], r["source"]) for r in rows]


def engine_fragments(fragments: list[Fragment]) -> list[tuple[str, float, str]]:
    return [(f.fragmentid, f.score, f.source) for f in fragments]


def assert_same(phrase: str, ours: list[tuple[str, float, str]],
                plugin: list[tuple[str, float, str]]) -> None:
    assert [f for f, _, _ in plugin] == [f for f, _, _ in ours], phrase
    for (fid, a, source_a), (_, b, source_b) in zip(ours, plugin, strict=True):
        assert abs(a - b) <= TOLERANCE, (phrase, fid, a, b)
        assert source_a == source_b


def test_the_plugin_phrase_is_the_engines_phrase(clean_db: Database,
                                                  db_settings: Settings) -> None:
    reason = _not_the_launchers()
    if reason is not None:
        pytest.skip(reason)
    corpus = xquad_slice()
    assert corpus.query_vectors is not None
    embedder = PrecomputedEmbedder(corpus.query_vectors,
                                   dimensions=db_settings.embedding_dimensions)
    graph = ThalabusGraph(clean_db, settings=db_settings, embedder=embedder)
    graph.ingest(documents(corpus), strict=True, progress=False, embed=False)
    vectors = {q: [float(x) for x in v] for q, v in corpus.query_vectors.items()}
    compared = 0
    for limit in (None, 5):
        for phrase in list(vectors)[::4]:
            ours = graph.query(quote_double(phrase), limit=limit).fragments
            options: dict[str, Any] = {"calibration": "multilingual-e5-small"}
            if limit is not None:
                options["limit"] = limit
            plugin = plugin_fragments(clean_db, graph.settings, phrase, vectors[phrase],
                                      options)
            if limit is not None:
                plugin = plugin[:len(ours)]
            assert_same(phrase, engine_fragments(ours), plugin)
            compared += len(ours)
    assert compared > 100
