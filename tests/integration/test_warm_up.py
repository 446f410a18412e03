"""The search warm-up (``thalabus_graph.warm_up``) on the real Neo4j: after a bulk ingest it
runs every query form without error, writes nothing, is reported by the ingest, and is skipped
for a small ingest; ``ThalabusGraph.warm_up`` and ``thalabus-graph warm-up`` run it on request,
and on an empty graph run nothing."""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import pytest

from tests.support.corpora import with_vectors
from tests.support.spies import spy_read_transactions
from thalabus_graph import Settings, ThalabusGraph, warm_up
from thalabus_graph.cli import main
from thalabus_graph.graph.database import Database
from thalabus_graph.query import parse, serialize
from thalabus_graph.query.ast import Category, Text

pytestmark = pytest.mark.integration

KINDS = ("common", "common", "common", "rare")


def documents(n: int) -> list[dict[str, Any]]:
    """``n`` documents with supplied vectors; three in four are KIND=common, one KIND=rare."""
    return with_vectors("warm", n, KINDS, seed=7)


def node_count(db: Database) -> int:
    records = db.driver.execute_query("MATCH (n) RETURN count(n)", database_=db.database).records
    return int(records[0][0])


def test_a_bulk_ingest_warms_every_query_form_up_and_writes_nothing(
        clean_db: Database, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(warm_up, "MIN_DOCUMENTS", 8)
    graph = ThalabusGraph(clean_db, settings=Settings.from_env())
    caplog.set_level(logging.INFO, logger="thalabus_graph.progress")
    report = graph.ingest(documents(8), embed=False)  # progress shown: log lines here
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0].startswith("ingest: ") and lines[-1].startswith("warm-up: "), lines
    assert not report.errors, report.errors
    assert report.documents == 8
    assert report.warm_up_seconds > 0
    assert report.warm_up_problem == ""
    assert "warm_up_seconds" in report.to_dict()

    before = node_count(clean_db)
    reads = spy_read_transactions(graph, monkeypatch)
    warmed = warm_up.warm_up(graph)
    assert warmed.problem == ""
    # the stored vector stands in for the graph's own model: no mismatch is warned about
    assert not [r.getMessage() for r in caplog.records
                if r.levelno >= logging.WARNING and r.name.startswith("thalabus_graph")]
    forms = warm_up.queries("a", "b", Category("KIND", ("common",)), Category("KIND", ("rare",)))
    # each form scoped to the sample's ontology and unscoped, with and without a limit, twice
    assert warmed.queries == len(forms) * 2 * 2 * 2
    # asked again, the filtered forms' searches carried their vocabulary reads
    assert any(r.endswith("(with category_vocabulary)") for r in reads)
    assert node_count(clean_db) == before


def test_the_query_forms_cover_the_operators_and_parse_back() -> None:
    common, rare = Category("KIND", ("common",)), Category("KIND", ("rare",))
    forms = warm_up.queries('a "quoted" phrase', "b", common, rare)
    texts = [serialize(f) for f in forms]
    assert all(parse(t) == f for t, f in zip(texts, forms, strict=True))
    joined = " ".join(texts)
    for operator in (" AND ", " OR ", " NOT "):
        assert operator in joined
    assert any(isinstance(f, Text) for f in forms)  # the phrase's full-text search
    assert len(warm_up.queries("a", "b", None, None)) == 3  # no category: the text forms


def test_a_small_ingest_does_not_warm_up(clean_db: Database) -> None:
    graph = ThalabusGraph(clean_db, settings=Settings.from_env())
    report = graph.ingest(documents(3), embed=False, progress=False)
    assert report.documents == 3
    assert report.warm_up_seconds == 0.0


def test_warm_up_on_request_runs_every_form_and_writes_nothing(
        neo4j_uri: str, clean_db: Database, capsys: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture) -> None:
    graph = ThalabusGraph(clean_db, settings=Settings.from_env())
    report = graph.ingest(documents(8), embed=False, progress=False)
    assert report.warm_up_seconds == 0.0  # below MIN_DOCUMENTS: not warmed by the ingest
    before = node_count(clean_db)
    forms = warm_up.queries("a", "b", Category("KIND", ("common",)), Category("KIND", ("rare",)))

    caplog.set_level(logging.INFO, logger="thalabus_graph.progress")
    warmed = graph.warm_up(progress=True)  # not a terminal: progress log lines
    assert isinstance(warmed, warm_up.WarmUp)
    total = len(forms) * 2 * 2 * 2
    assert re.fullmatch(rf"warm-up: {total}/{total} queries, [\d.,]+ query/s, "
                        r"done in \d+ (s|min \d\d s)", caplog.records[-1].getMessage())
    assert (warmed.queries, warmed.problem) == (total, "")
    assert warmed.seconds > 0
    assert main(["warm-up", "--uri", neo4j_uri, "--no-progress"]) == 0
    assert capsys.readouterr().out.startswith(f"warmed up: {warmed.queries} queries in ")
    assert node_count(clean_db) == before


def test_an_empty_graph_has_nothing_to_warm_up(
        neo4j_uri: str, clean_db: Database, capsys: pytest.CaptureFixture[str]) -> None:
    before = node_count(clean_db)
    assert ThalabusGraph(clean_db, settings=Settings.from_env()).warm_up().queries == 0
    assert main(["warm-up", "--uri", neo4j_uri]) == 0
    assert capsys.readouterr().out == (
        "nothing to warm up: the graph holds no fragment with an embedding\n")
    assert main(["warm-up", "--uri", neo4j_uri, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == {"queries": 0, "seconds": out["seconds"], "problem": ""}
    assert node_count(clean_db) == before
