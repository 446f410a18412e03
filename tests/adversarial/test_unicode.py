"""Text written two ways is one text: NFC for meaning, NFKC folding for full-text matching."""

from __future__ import annotations

import unicodedata

import pytest

from tests.adversarial.conftest import HashEmbedder
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.graph.database import Database
from thalabus_graph.query import Category, Semantic, parse

pytestmark = pytest.mark.integration
DIMS = Settings.from_env().embedding_dimensions
FULL_WIDTH = "\uff13.\uff15"
"""3.5 in full-width digits."""


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


@pytest.fixture()
def graph(clean_db: Database) -> ThalabusGraph:
    g = ThalabusGraph(clean_db, settings=Settings.from_env(), embedder=HashEmbedder(DIMS))
    g.ingest([
        {"documentid": "u-1", "categories": {"CITY": "Zürich"},
         "chapters": ["Ein café am See, Version 3.5 der Karte."]},
        {"documentid": "u-2", "categories": {"CITY": "Bern"},
         "chapters": [f"Full-width text: {FULL_WIDTH} liters."]},
    ], progress=False)
    return g


def test_nfd_query_finds_nfc_text_and_category(graph: ThalabusGraph) -> None:
    found = graph.query(nfd("'café'"), return_documents=False).fragments
    assert {f.documentid for f in found} == {"u-1"}
    result = graph.query(nfd("CITY='Zürich'"), return_documents=False)
    assert {f.documentid for f in result.fragments} == {"u-1"}
    assert result.warnings == []
    assert Semantic(nfd("café")).text == "café"
    assert Category("CITY", (nfd("Zürich"),)).values == ("Zürich",)
    assert parse(nfd('"café"')) == Semantic("café")


def test_full_width_digits_match_ascii(graph: ThalabusGraph) -> None:
    found = graph.query(f"'{FULL_WIDTH}'", return_documents=False).fragments
    assert {f.documentid for f in found} == {"u-1", "u-2"}
    found = graph.query("'3.5'", return_documents=False).fragments
    assert "u-1" in {f.documentid for f in found}


def test_nfd_input_is_stored_nfc(clean_db: Database) -> None:
    g = ThalabusGraph(clean_db, settings=Settings.from_env(), embedder=HashEmbedder(DIMS))
    g.ingest([{"documentid": "u-3", "title": nfd("Café"), "categories": {"CITY": nfd("Zürich")},
               "chapters": [nfd("Crème brûlée")], "keywords": [nfd("naïve")]}], progress=False)
    rows = clean_db.driver.execute_query(
        "MATCH (f:Fragment {documentid: 'u-3'}) RETURN f.text AS text "
        "UNION ALL MATCH (c:Category) RETURN c.value AS text "
        "UNION ALL MATCH (d:Document) RETURN d.title AS text",
        database_=clean_db.database).records
    texts = [r["text"] for r in rows]
    assert texts and all(t == unicodedata.normalize("NFC", t) for t in texts)
    assert "Crème brûlée" in texts and "Zürich" in texts and "Café" in texts
    found = g.query("CITY=Zürich", return_documents=False).fragments
    assert {f.documentid for f in found} == {"u-3"}
