"""The keyword source and the short-phrase-only hybrid on the sample corpus: a keyword that no
chapter contains is found through the keyword full-text index, by a TEXT term and by a short
SEMANTIC phrase; with ``hybrid_all_queries`` off a long phrase runs no text search."""

from __future__ import annotations

import pytest

from tests.integration.sample import documents, load_sample
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.fragments import Fragment
from thalabus_graph.graph.database import Database

pytestmark = pytest.mark.integration

KEYWORD = "Militärdienstverweigerung"
LONG = f"{KEYWORD} und die Angst vor der Einberufung zum Reservedienst"


@pytest.fixture(scope="module")
def graph(db: Database) -> ThalabusGraph:
    return load_sample(db)


@pytest.fixture(scope="module")
def keyword_id() -> str:
    """The fragment id of KEYWORD, the only text in the corpus holding that word."""
    owners = [(d["documentid"], d["keywords"].index(KEYWORD)) for d in documents()
              if KEYWORD in d.get("keywords", [])]
    assert len(owners) == 1
    texts = [t for d in documents()
             for t in (*d.get("chapters", []), *d.get("summaries", []))]
    assert not any(KEYWORD.lower() in t.lower() for t in texts)
    documentid, index = owners[0]
    return f"{documentid}-k{index + 1}"


def short_only(graph: ThalabusGraph) -> ThalabusGraph:
    settings = Settings.from_env(hybrid_all_queries=False, short_query_max_words=4)
    return ThalabusGraph(graph.db, settings=settings, embedder=graph.embedder)


def keyword_hits(fragments: list[Fragment]) -> list[Fragment]:
    return [f for f in fragments if f.source == "keywords"]


def test_a_text_term_finds_a_keyword_hit(graph: ThalabusGraph, keyword_id: str) -> None:
    found = graph.query(f"'{KEYWORD}'", return_documents=False).fragments
    assert [(f.fragmentid, f.text, f.source) for f in found] == \
        [(keyword_id, KEYWORD, "keywords")]
    documents_found = graph.query(f"'{KEYWORD.lower()}'").documents or []
    assert [d.documentid for d in documents_found] == [keyword_id.rsplit("-", 1)[0]]


def test_a_short_phrase_runs_the_text_search_and_finds_the_keyword(
        graph: ThalabusGraph, keyword_id: str) -> None:
    found = short_only(graph).query(f'"{KEYWORD}"', return_documents=False).fragments
    assert [f.fragmentid for f in keyword_hits(found)] == [keyword_id]
    assert "text:keywords" in next(f for f in found if f.fragmentid == keyword_id).contributions


def test_with_hybrid_all_queries_off_a_long_phrase_runs_no_text_search(
        graph: ThalabusGraph, keyword_id: str) -> None:
    assert len(LONG.split()) > 4
    semantic_only = short_only(graph).query(f'"{LONG}"', return_documents=False).fragments
    assert semantic_only and keyword_hits(semantic_only) == []
    assert not any(c.startswith("text:") for f in semantic_only for c in f.contributions)
    # on the index scale: the calibrated one keeps a text-only hit of a phrase only when its
    # language slot is high enough (docs/architecture.md, "Score calibration")
    index_scale = ThalabusGraph(graph.db, settings=graph.settings.replace(
        calibration_file="none"), embedder=graph.embedder)
    hybrid = index_scale.query(f'"{LONG}"', return_documents=False).fragments
    assert keyword_id in [f.fragmentid for f in keyword_hits(hybrid)]
    assert any(c.startswith("text:") for f in hybrid for c in f.contributions)
