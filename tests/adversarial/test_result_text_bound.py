"""A huge chapter costs a query the result bound, not its whole text: the search statements
return fragment texts cut on the server to ``MAX_RESULT_TEXT_CHARS``, and a case-sensitive
text search still finds a term that lies past the cut."""

from __future__ import annotations

import pytest

from tests.adversarial.conftest import HashEmbedder
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.graph.database import Database

pytestmark = pytest.mark.integration
BOUND = 1_000
HUGE = "zebra crossing " + "filler words of a long chapter " * 10_000 + "NEEDLE at the end"


@pytest.fixture()
def graph(clean_db: Database) -> ThalabusGraph:
    settings = Settings.from_env().replace(max_result_text_chars=BOUND)
    g = ThalabusGraph(clean_db, settings=settings,
                      embedder=HashEmbedder(settings.embedding_dimensions))
    g.ingest([{"documentid": "huge", "ontology": "big", "chapters": [HUGE]},
              {"documentid": "small", "ontology": "big",
               "chapters": ["a zebra crossing, short"]}], progress=False)
    return g


def test_every_search_returns_texts_cut_to_the_bound(graph: ThalabusGraph) -> None:
    assert len(HUGE) > 100 * BOUND
    for text in ('"zebra crossing"', "'zebra crossing'", '"zebra" AND \'crossing\''):
        fragments = graph.query(text, return_documents=False).fragments
        huge = [f for f in fragments if f.documentid == "huge"]
        assert huge, text
        assert all(f.text is not None and len(f.text) <= BOUND for f in fragments), text
        assert all(f.text == HUGE[:BOUND] for f in huge if f.source != "category"), text
    documents = graph.query('"zebra crossing"').documents
    assert all(len(f.text or "") <= BOUND for d in documents for f in d.fragments)


def test_a_case_sensitive_term_past_the_cut_is_still_found(graph: ThalabusGraph) -> None:
    found = graph.query("@'NEEDLE'", return_documents=False).fragments
    assert {f.documentid for f in found} == {"huge"}
    assert all(len(f.text or "") <= BOUND for f in found)
    # the case-insensitive index holds 'needle' too; the exact form is not in the text
    assert graph.query("@'needle'", return_documents=False).fragments == []
