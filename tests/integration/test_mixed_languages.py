"""Short, one-word and other-language phrases on a small mixed-language corpus
(``tests/data/mixed_corpus.jsonl``: 30 short documents in English, German and French, written
for this test) return the documents that hold them on the calibrated scale (the default).

The glacier document exists only in German, so ``"glaciers"`` and ``"melting glaciers"`` find
it through its embedding alone (the gate reads the best cosine of a candidate in another
language with the gate fitted for phrases sharing no words with their fragments); ``"Zug"``
has no word of four letters and finds ``Züge`` through the German text search; the tasting
document names wine only in its keyword, which ``"wine"`` holds whole. A phrase about a topic
the corpus lacks returns nothing and says so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.sample import shared_embedder
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.graph.database import Database
from thalabus_graph.scoring.scale import DroppedWarning

pytestmark = pytest.mark.integration

CORPUS = Path(__file__).resolve().parents[1] / "data" / "mixed_corpus.jsonl"


@pytest.fixture(scope="module")
def graph(db: Database, db_settings: Settings) -> ThalabusGraph:
    db.write("migrations_delete_data_nodes")
    graph = ThalabusGraph(db, settings=db_settings.replace(calibration_file=""),
                          embedder=shared_embedder())
    graph.ingest(CORPUS, progress=False, strict=True)
    return graph


@pytest.mark.parametrize(("phrase", "holder"), [
    ("Zug", "mx-02"), ("glaciers", "mx-01"), ("wine", "mx-03"),
    ("melting glaciers", "mx-01")])
def test_short_and_other_language_phrases_find_the_documents_holding_them(
        graph: ThalabusGraph, phrase: str, holder: str) -> None:
    result = graph.query(f'"{phrase}"', limit=10)
    assert result.documents is not None
    found = [d.documentid for d in result.documents]
    assert holder in found, (phrase, found, [w.message for w in result.warnings])


def test_an_exact_keyword_match_ranks_with_the_phrases_best(graph: ThalabusGraph) -> None:
    result = graph.query('"wine"', limit=3)
    assert result.documents is not None
    assert result.documents[0].documentid == "mx-03"


def test_an_emptied_phrase_says_what_was_dropped(graph: ThalabusGraph) -> None:
    result = graph.query('"lattice quantum chromodynamics on supercomputers"', limit=10)
    dropped = [w for w in result.warnings if isinstance(w, DroppedWarning)]
    assert result.documents == [] or any(w.rule == "doubtful" for w in dropped)
    assert len(dropped) == 1
    warning = dropped[0]
    assert warning.subject == "lattice quantum chromodynamics on supercomputers"
    assert warning.dropped > 0 and warning.best_cosine is not None
    assert warning.to_dict()["rule"] in ("gate", "min_score", "doubtful")

