"""The command line against the real Neo4j: JSON output, exit codes, one-line errors."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integration.sample import CORPUS
from thalabus_graph.cli import main
from thalabus_graph.graph.database import Database

pytestmark = [pytest.mark.integration, pytest.mark.line_neutral]


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
    assert main(["datasets", "show", "nope", *uri]) == 2  # an unknown dataset id is bad input
    assert capsys.readouterr().err.count("\n") == 1


def _stories(tmp_path: Path) -> Path:
    corpus = tmp_path / "stories.jsonl"
    corpus.write_text("\n".join(line for line in CORPUS.read_text(encoding="utf-8").splitlines()
                                if '"stories"' in line) + "\n", encoding="utf-8")
    return corpus


def _deep_json(text: str) -> Any:
    """``json.loads`` for documents nested deeper than the default recursion limit."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)
    try:
        return json.loads(text)
    finally:
        sys.setrecursionlimit(limit)


def test_ingest_of_a_missing_file_is_one_line_and_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.jsonl"
    assert main(["ingest", str(missing), "--uri", "bolt://127.0.0.1:9"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"error: cannot read {missing}: No such file or directory\n"
    assert main(["ingest", str(missing), "--uri", "bolt://127.0.0.1:9", "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["type"] == "IngestError" and str(missing) in error["message"]


def test_a_file_of_no_document_exits_2_and_its_skipped_lines_are_counted(
        neo4j_uri: str, clean_db: Database, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    wrong = tmp_path / "notes.md"
    wrong.write_text("".join(f"line {i} of prose\n" for i in range(30)), encoding="utf-8")
    assert main(["ingest", str(wrong), "--uri", neo4j_uri]) == 2
    err = capsys.readouterr().err.splitlines()
    assert sum(line.startswith("skipped line ") for line in err) == 20
    assert "skipped 30 lines (10 more than shown; --json lists every one)" in err
    assert err[-1] == "error: no line of the file was a document to ingest"
    assert main(["ingest", str(wrong), "--uri", neo4j_uri, "--json"]) == 2
    assert len(json.loads(capsys.readouterr().out)["errors"]) == 30
    assert main(["ingest", str(_stories(tmp_path)), "--uri", neo4j_uri]) == 0


def test_a_database_the_server_lacks_is_bad_input_naming_the_flag(
        neo4j_uri: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["query", '"x"', "--uri", neo4j_uri, "--database", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such database" in err and "--database" in err


def test_long_output_into_a_closed_pipe_prints_no_traceback(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("thalabus-graph")
    query = " AND ".join(f"K=v{i}" for i in range(5_000))  # filters: free of max_query_terms
    done = subprocess.run(f"{shlex.quote(str(script))} parse {shlex.quote(query)} | head -c 20",
                          shell=True, capture_output=True, text=True, timeout=120,
                          executable="/bin/bash")
    assert done.stdout == '{"type": "AND", "left": '[:20]
    assert done.stderr == ""


def test_profile_prints_a_tree_and_deep_json(neo4j_uri: str, clean_db: Database,
                                             tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    uri = ["--uri", neo4j_uri]
    assert main(["ingest", str(_stories(tmp_path)), *uri, "--json"]) == 0
    capsys.readouterr()
    query = "NOT " * 1_000 + "CHARACTER=Sammy"
    assert main(["query", query, "--profile", "--fragments", *uri]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "1 fragments" and out[1].split()[:2] == ["1.0000", "docid-2002"]
    assert out[2].startswith("profile: ") and out[2].endswith(" 1 fragments")
    tree = out[3:]
    assert len([line for line in tree if "[restricted to: " in line]) == 1_001
    assert tree[0].startswith("NOT NOT NOT") and "rows=1, ms=" in tree[0]
    # A pure filter: one streamed statement at the root, the operands checked inside it.
    assert re.fullmatch(r" {80}\[1000\] CATEGORY CHARACTER=Sammy  \[restricted to: none\]"
                        r"  rows=None, ms=0.0", tree[-2])
    assert "search_filter_documents" in tree[1] and "skipped" in tree[-1]
    assert main(["query", query, "--profile", "--json", *uri]) == 0
    plan = _deep_json(capsys.readouterr().out)["plan"]
    node, depth = plan["tree"], 1
    while node.get("children"):
        node, depth = node["children"][0], depth + 1
    assert depth == 1_001 and node["op"] == "CATEGORY"


def test_errors_are_json_with_json(neo4j_uri: str, clean_db: Database,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    uri = ["--uri", neo4j_uri]
    for argv in (["query", '"x" AND', *uri], ["explain", '"x" AND', *uri], ["parse", '"x" AND']):
        assert main([*argv, "--json"]) == 2
        captured = capsys.readouterr()
        error = json.loads(captured.out)["error"]
        assert error["type"] == "ThalabusSyntaxError" and error["position"] == 7
        assert captured.err.startswith("error: expected a term")
    assert main(["datasets", "show", "nope", *uri, "--json"]) == 2
    captured = capsys.readouterr()
    assert json.loads(captured.out)["error"]["type"] == "DatasetInputError"
    assert captured.err.count("\n") == 1


def test_an_id_that_is_not_found_is_bad_input_everywhere(
        neo4j_uri: str, clean_db: Database, capsys: pytest.CaptureFixture[str]) -> None:
    uri = ["--uri", neo4j_uri]
    for argv in (["goal", "load", "g1", "own-999"], ["goal", "use", "g2", "nope#1"],
                 ["goal", "show", "nope"], ["datasets", "show", "nope#1"],
                 ["datasets", "hide", "nope#1", "own-1-c1"], ["rerank", "nope#1"]):
        assert main([*argv, *uri]) == 2, argv
        assert capsys.readouterr().err.splitlines()[-1].startswith("error: "), argv
