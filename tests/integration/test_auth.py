"""An auth-enabled Neo4j (started by the launcher with a password) through the CLI and the API.

Every command reads the same four variables, NEO4J_URI, NEO4J_USERNAME, NEO4J_PASSWORD and
NEO4J_DATABASE; a wrong password is one line on stderr and exit code 1. The server is this
module's own (a temporary data dir), so the tests may write to it freely.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from thalabus_graph import ThalabusGraph
from thalabus_graph.errors import GraphError
from thalabus_graph.graph.launcher import LocalNeo4j, generate_password

pytestmark = pytest.mark.integration

CLI = str(Path(sys.executable).with_name("thalabus-graph"))
CORPUS = (Path(__file__).resolve().parents[2] / "thalabus_graph" / "resources"
          / "sample_corpus.jsonl")


@pytest.fixture(scope="module")
def auth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """An auth-enabled server on its own data dir: (uri, password)."""
    password = generate_password()
    server = LocalNeo4j(data_dir=tmp_path_factory.mktemp("auth"), exit_with_parent=True,
                        password=password)
    uri = server.start()
    try:
        assert server.status().auth is True
        yield uri, password
    finally:
        server.stop()


def _env(uri: str, password: str | None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")}
    env.update(NEO4J_URI=uri, NEO4J_USERNAME="neo4j", NEO4J_DATABASE="neo4j", **extra)
    if password is not None:
        env["NEO4J_PASSWORD"] = password
    return env


def _cli(*args: str, env: dict[str, str], stdin: str | None = None
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *args], env=env, input=stdin, capture_output=True, text=True,
                          timeout=600, check=False)


def _ok(*args: str, env: dict[str, str], stdin: str | None = None) -> str:
    done = _cli(*args, env=env, stdin=stdin)
    assert done.returncode == 0, f"{args}: rc {done.returncode}\n{done.stderr}"
    return done.stdout


@pytest.mark.line_neutral
def test_every_cli_command_works_with_the_four_variables(auth_server: tuple[str, str],
                                                        tmp_path: Path) -> None:
    uri, password = auth_server
    env = _env(uri, password)
    corpus = tmp_path / "three.jsonl"
    corpus.write_text("\n".join(CORPUS.read_text(encoding="utf-8").splitlines()[:3]) + "\n",
                      encoding="utf-8")
    _ok("migrate", env=env)
    report = json.loads(_ok("ingest", str(corpus), "--json", env=env))
    assert report["documents"] == 3 and report["errors"] == []
    result = json.loads(_ok("query", '"asylum"', "--dataset", "--session", "auth", "--json",
                            env=env))
    assert result["dataset_ids"] == ["auth#dataset_1"] and result["documents"]
    plan = json.loads(_ok("explain", '"asylum" AND COUNTRY_OF_ORIGIN=IQ', "--json", env=env))
    assert plan["plan"]["op"] == "AND"
    listed = json.loads(_ok("datasets", "list", "--json", env=env))
    assert [d["datasetid"] for d in listed] == ["auth#dataset_1"]
    reranked = json.loads(_ok("rerank", "auth#dataset_1", "--json", env=env))
    assert reranked["parent_id"] == "auth#dataset_1" and reranked["fragments"]
    # The flags do the same without the variables: the password from stdin.
    bare = {k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")}
    out = _ok("migrations", "status", "--uri", uri, "--username", "neo4j", "--password-stdin",
              "--database", "neo4j", env=bare, stdin=password + "\n")
    assert "applied" in out


def test_api_connects_with_the_four_variables(auth_server: tuple[str, str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    uri, password = auth_server
    for key, value in _env(uri, password).items():
        if key.startswith("NEO4J_"):
            monkeypatch.setenv(key, value)
    with ThalabusGraph.connect() as g:
        g.migrate()
        assert g.db.database == "neo4j"
        assert isinstance(g.datasets.list_datasets(None), list)
    monkeypatch.setenv("NEO4J_PASSWORD", "not-the-password")
    with pytest.raises(GraphError, match="authentication failed") as failed:
        ThalabusGraph.connect()
    assert "auth=(user, password)" in str(failed.value) and "--" not in str(failed.value)
    monkeypatch.setenv("NEO4J_PASSWORD", password)
    monkeypatch.setenv("NEO4J_DATABASE", "nosuchdb")
    with ThalabusGraph.connect() as g, pytest.raises(GraphError, match=r"(?i)database"):
        g.datasets.list_datasets(None)


def test_wrong_or_missing_password_is_one_line_and_exit_1(auth_server: tuple[str, str]) -> None:
    # Last in the module: the failed logins trip Neo4j's authentication rate limit
    # (3 failures lock the user for a few seconds), which would fail the tests after it.
    uri, _ = auth_server
    for env in (_env(uri, "wrong-password"), _env(uri, None)):
        for command in (["migrate"], ["datasets", "list"], ["query", "'x'"]):
            done = _cli(*command, env=env)
            assert done.returncode == 1, done
            lines = done.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
            assert "authentication failed" in lines[0] and "NEO4J_PASSWORD" in lines[0]
            if env.get("NEO4J_PASSWORD"):   # a wrong one: the CLI names its flags
                assert "--username and --password-stdin" in lines[0], lines[0]
            assert "Traceback" not in done.stderr
