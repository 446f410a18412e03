"""A document's extra properties may not take the names the engine uses on its nodes.

Extra properties land on the Document node beside the engine's own. A document carrying
``fragmentid`` would read as that fragment wherever a dataset member's id is
``coalesce(fragmentid, documentid)``, so one ``hide`` would change two members; ``text``,
``embedding``, ``ordinal`` and ``ontologyid`` would read as fragment data. Such a line is
refused like any bad line: reported with its number and skipped, or the run stops (strict).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.adversarial.conftest import HashEmbedder
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.errors import IngestError
from thalabus_graph.graph.database import Database
from thalabus_graph.ingest.parsing import document_from_dict
from thalabus_graph.ingest.source import SourceDocument

NAMED_IN_THE_GRAPH_MODEL = ("fragmentid", "text", "embedding", "ordinal", "ontologyid",
                            "embedding_hash", "ingest_properties")


@pytest.mark.parametrize("name", NAMED_IN_THE_GRAPH_MODEL)
def test_an_engine_property_name_is_refused(name: str) -> None:
    with pytest.raises(IngestError, match=rf"property name '{name}' is reserved") as caught:
        document_from_dict({"documentid": "spoof-1", name: "h-1-c1"}, 7)
    assert caught.value.line_number == 7


def test_a_property_differing_only_in_case_is_data() -> None:
    doc = document_from_dict({"documentid": "d-1", "FragmentId": "x", "texts": "y"})
    assert dict(doc.properties) == {"FragmentId": "x", "texts": "y"}


SPOOF = {"documentid": "spoof-1", "categories": {"SPOOF": ["1"]}, "fragmentid": "h-1-c1"}
HOST = {"documentid": "h-1", "categories": {"SPOOF": ["1"]}, "chapters": ["the host text"]}


def _corpus(tmp_path: Path) -> Path:
    path = tmp_path / "spoof.jsonl"
    path.write_text(f"{json.dumps(HOST)}\n{json.dumps(SPOOF)}\n", encoding="utf-8")
    return path


def _graph(db: Database) -> ThalabusGraph:
    settings = Settings.from_env()
    return ThalabusGraph(db, settings=settings,
                         embedder=HashEmbedder(settings.embedding_dimensions))


@pytest.mark.integration
def test_a_document_cannot_pose_as_a_dataset_member(clean_db: Database,
                                                    tmp_path: Path) -> None:
    graph = _graph(clean_db)
    report = graph.ingest(_corpus(tmp_path), progress=False)
    assert [(e.line_number, "reserved" in e.message) for e in report.errors] == [(2, True)]
    assert report.documents == 1

    result = graph.query("SPOOF=1", create_dataset=True, session="spoof")
    members = graph.datasets.members(result.dataset_ids[0])
    assert [m.fragmentid for m in members] == ["h-1"]
    spoofed = clean_db.driver.execute_query(
        "MATCH (d:Document) WHERE d.fragmentid IS NOT NULL RETURN count(d) AS n",
        database_=clean_db.database).records[0]["n"]
    assert spoofed == 0


@pytest.mark.integration
def test_strict_ingest_stops_at_the_reserved_name(clean_db: Database, tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="reserved") as caught:
        _graph(clean_db).ingest(_corpus(tmp_path), strict=True, progress=False)
    assert caught.value.line_number == 2


@pytest.mark.integration
def test_a_document_built_in_python_is_held_to_the_same_names(clean_db: Database) -> None:
    report = _graph(clean_db).ingest(
        [SourceDocument("spoof-1", properties={"fragmentid": "h-1-c1"}),
         SourceDocument("fine-1", properties={"court": "BVGer"})], progress=False)
    assert [(e.line_number, "reserved" in e.message) for e in report.errors] == [(1, True)]
    assert report.documents == 1
