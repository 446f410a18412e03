"""Hostile edges of the CLI and the API: one-line errors and the documented exit codes (2 for
bad input), never a traceback or a bare Python exception."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.cli import main
from thalabus_graph.errors import (
    ConfigurationError,
    InvalidTextError,
    QueryNodeError,
    ThalabusSyntaxError,
)
from thalabus_graph.graph.connection import Connection
from thalabus_graph.graph.database import Database
from thalabus_graph.query import Category, Semantic

ENTRY = "import sys; from thalabus_graph.cli import main; sys.exit(main())"


def test_undecodable_argv_is_one_line_and_exit_2_also_as_json() -> None:
    for extra in ([], ["--json"]):
        done = subprocess.run([sys.executable, "-c", ENTRY, "query", b'"caf\xff"', *extra],
                              capture_output=True, timeout=60, check=False,
                              env={"PATH": "/usr/bin:/bin", "NEO4J_URI": "bolt://127.0.0.1:1"})
        assert done.returncode == 2, done.stderr
        err = done.stderr.decode()
        assert err.count("\n") == 1 and "not valid UTF-8" in err and "Traceback" not in err
        if extra:
            assert json.loads(done.stdout)["error"]["type"] == "ConfigurationError"


@pytest.mark.parametrize("uri", ["bolt://127.0.0.1:notaport", "bolt://127.0.0.1:99999",
                                 "bolt://127.0.0.1:0", "http://127.0.0.1:7687", "bolt://:7687"])
def test_a_bad_neo4j_uri_is_refused_in_one_line_with_exit_2(
        uri: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("NEO4J_URI", uri)
    assert main(["query", '"zebra"']) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: Neo4j URI")
    with pytest.raises(ConfigurationError):
        Database.connect(uri)


def test_a_port_above_65535_is_not_wrapped() -> None:
    with pytest.raises(ConfigurationError, match="1-65535"):
        Connection.resolve("bolt://127.0.0.1:99999")


@pytest.mark.integration
def test_a_lone_surrogate_through_the_api_is_a_clear_error(clean_db: Database) -> None:
    graph = ThalabusGraph(clean_db, settings=Settings.from_env())
    with pytest.raises(ThalabusSyntaxError) as caught:
        graph.query('"caf\ud800"')
    assert caught.value.position == 4
    with pytest.raises(QueryNodeError, match="lone surrogate"):
        Semantic("caf\ud800")
    with pytest.raises(QueryNodeError, match="lone surrogate"):
        Category("CITY", ("Z\udc00rich",))
    with pytest.raises(InvalidTextError, match="lone surrogate"):
        graph.query("KIND=x", ontology_id="o\ud800")


@pytest.mark.integration
@pytest.mark.parametrize("extra", [["--dataset", "--session", "a#b"],
                                   ["--within", "no-such#dataset_1"]])
def test_a_bad_session_or_unknown_within_dataset_exits_2(
        neo4j_uri: str, clean_db: Database, capsys: pytest.CaptureFixture[str],
        extra: list[str]) -> None:
    graph = ThalabusGraph(clean_db, settings=Settings.from_env())
    graph.ingest([{"documentid": "e-1", "categories": {"KIND": "x"}}], progress=False,
                 embed=False)
    assert main(["query", "KIND=x", "--uri", neo4j_uri, *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ")


def test_a_multi_line_driver_message_is_printed_on_one_line(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:1")
    assert main(["query", "KIND=x"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not reachable" in err
