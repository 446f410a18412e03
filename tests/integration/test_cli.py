"""The command line against the real Neo4j: JSON output, exit codes, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.sample import CORPUS
from thalabus_graph.cli import main
from thalabus_graph.graph.database import Database

pytestmark = pytest.mark.integration


def test_ingest_query_explain_and_datasets(neo4j_uri: str, clean_db: Database,
                                           tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                           ) -> None:
    lines = [line for line in CORPUS.read_text(encoding="utf-8").splitlines()
             if '"stories"' in line]
    corpus = tmp_path / "stories.jsonl"
    corpus.write_text("\n".join([*lines, "{broken"]) + "\n", encoding="utf-8")
    uri = ["--uri", neo4j_uri]
    assert main(["ingest", str(corpus), *uri, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["documents"] == len(lines)
    assert report["errors"] == [{"line": len(lines) + 1, "message": report["errors"][0]["message"]}]
    assert main(["ingest", str(corpus), *uri, "--strict"]) == 2
    assert "line" in capsys.readouterr().err

    assert main(["query", "CHARACTER=Sammy", *uri, "--json", "--dataset", "--session", "cli"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [d["documentid"] for d in out["documents"]] == ["docid-2002"]
    assert out["dataset_ids"] == ["cli#dataset_1"]

    assert main(["explain", "\"tree\" AND CHARACTER=Bob", *uri, "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["plan"]["op"] == "AND"

    assert main(["datasets", "list", *uri, "--json"]) == 0
    assert [d["datasetid"] for d in json.loads(capsys.readouterr().out)] == ["cli#dataset_1"]
    assert main(["datasets", "show", "cli#dataset_1", *uri]) == 0
    assert "docid-2002" in capsys.readouterr().out

    assert main(["query", '"x" AND', *uri]) == 2
    err = capsys.readouterr().err
    assert "position 7" in err
    assert main(["datasets", "show", "nope", *uri]) == 1
    assert capsys.readouterr().err.count("\n") == 1
