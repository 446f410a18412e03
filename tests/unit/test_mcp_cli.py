"""``thalabus-graph mcp`` refuses what it cannot serve before connecting anywhere: without
the MCP SDK it says how to install it, HTTP needs a bearer token, stdio cannot share stdin
with ``--password-stdin``."""

from __future__ import annotations

import sys

import pytest

from thalabus_graph.cli import main


def test_without_the_sdk_it_says_how_to_install_it(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for name in [m for m in sys.modules if m == "mcp" or m.startswith(("mcp.",
                                                                       "thalabus_graph.mcp"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mcp", None)  # import mcp now fails as if not installed
    assert main(["mcp"]) == 2
    assert "pip install 'thalabus-graph[mcp]'" in capsys.readouterr().err


def test_http_without_a_token_is_refused(monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("MY_TOKEN", raising=False)
    assert main(["mcp", "--transport", "http", "--token-env", "MY_TOKEN"]) == 2
    assert "$MY_TOKEN" in capsys.readouterr().err


def test_stdio_with_password_stdin_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "--password-stdin"]) == 2
    assert "--password-stdin" in capsys.readouterr().err
