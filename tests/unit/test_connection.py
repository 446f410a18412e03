"""One connection configuration for API, CLI and tests; secrets never reach a repr."""

from __future__ import annotations

import io

import pytest

from thalabus_graph import Settings
from thalabus_graph.cli import build_parser, common
from thalabus_graph.graph.connection import Connection


def test_variables_fill_what_is_not_given() -> None:
    env = {"NEO4J_URI": "neo4j://db:7687", "NEO4J_USERNAME": "reader",
           "NEO4J_PASSWORD": "pw-from-env", "NEO4J_DATABASE": "books"}
    c = Connection.resolve(environ=env)
    assert (c.uri, c.auth, c.database) == ("neo4j://db:7687", ("reader", "pw-from-env"), "books")
    given = Connection.resolve("bolt://h:1", username="u", password="p", database="d",
                               environ=env)
    assert (given.uri, given.auth, given.database) == ("bolt://h:1", ("u", "p"), "d")


def test_no_password_means_no_auth_and_defaults_apply() -> None:
    c = Connection.resolve(environ={"NEO4J_PASSWORD": "", "NEO4J_USER": "old-name"})
    assert c.auth is None
    assert (c.uri, c.username, c.database) == ("bolt://127.0.0.1:7687", "neo4j", "neo4j")


def test_connection_repr_hides_the_password() -> None:
    c = Connection.resolve(environ={"NEO4J_PASSWORD": "hunter2-secret"})
    assert "hunter2-secret" not in repr(c) and "hunter2-secret" not in str(c)
    assert c.auth == ("neo4j", "hunter2-secret")


def test_settings_repr_hides_api_keys() -> None:
    s = Settings(embedder_api_key="sk-embed-123", reranker_api_key="sk-rerank-456")
    text = repr(s)
    assert "sk-embed-123" not in text and "sk-rerank-456" not in text
    assert "embedder_api_key='***'" in text and "reranker_api_key='***'" in text
    assert "embedding_dimensions=384" in text  # everything else is still shown
    assert "reranker_api_key=''" in repr(Settings())  # an unset key is shown as unset


@pytest.mark.parametrize("command", [
    ["migrate"], ["migrations", "status"], ["ingest", "x.jsonl"], ["query", "'x'"],
    ["explain", "'x'"], ["rerank", "d#1"], ["datasets", "list"], ["datasets", "show", "d#1"],
])
def test_every_graph_command_takes_the_connection_flags(
        command: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEO4J_PASSWORD", "from-env")
    monkeypatch.setattr("sys.stdin", io.StringIO("from-stdin\nrest\n"))
    args = build_parser().parse_args([*command, "--uri", "bolt://h:9", "--username", "u",
                                      "--password-stdin", "--database", "d"])
    c = common.connection(args)
    assert (c.uri, c.auth, c.database) == ("bolt://h:9", ("u", "from-stdin"), "d")


def test_password_stdin_with_nothing_on_stdin_is_a_clear_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from thalabus_graph.errors import ConfigurationError

    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    args = build_parser().parse_args(["migrate", "--password-stdin"])
    with pytest.raises(ConfigurationError, match="nothing on stdin"):
        common.connection(args)
