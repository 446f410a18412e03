"""Secrets never reach an error line: a service echoing the request's credentials is quoted
shortened and redacted, and a URI is shown without its user info."""

from __future__ import annotations

import json
import logging

import pytest

from tests.support.loopback import LoopbackServer, Request, Response
from thalabus_graph import Settings
from thalabus_graph._http import SNIPPET_CHARS
from thalabus_graph.cli import main
from thalabus_graph.embeddings import OpenAIEmbedder
from thalabus_graph.errors import ServiceError
from thalabus_graph.rerank._sync import run_sync
from thalabus_graph.rerank.protocol import Passage
from thalabus_graph.rerank.score_api import ScoreApiReranker

KEY = "sk-SECRETKEYVALUE0123456789"
OTHER = "hunter2-password-value"


def echo(status: int) -> object:
    """A server that answers ``status`` with a body echoing the request's headers and more."""

    def handle(request: Request) -> Response:
        body = {"error": "denied", "headers": request.headers, "hint": f"password={OTHER}",
                "basic": "Authorization: Basic dXNlcjpodW50ZXIy", "padding": "x" * 5000}
        return Response(status=status, raw=json.dumps(body).encode())

    return handle


@pytest.mark.parametrize("status", [401, 500])
def test_an_embedding_server_echoing_the_key_is_quoted_redacted_and_short(status: int) -> None:
    with LoopbackServer(echo(status)) as server:  # type: ignore[arg-type]
        embedder = OpenAIEmbedder(server.url, "m", dimensions=4, api_key=KEY, max_retries=0)
        with pytest.raises(ServiceError) as caught:
            embedder.embed_queries(["q"])
    message = str(caught.value)
    assert "SECRETKEY" not in message and OTHER not in message and "dXNlcj" not in message
    assert "denied" in message  # the useful part of the body is still there
    assert len(message) < SNIPPET_CHARS + 200


def test_a_reranker_echoing_the_key_leaves_no_secret_in_results_or_logs(
        caplog: pytest.LogCaptureFixture) -> None:
    with LoopbackServer(echo(403)) as server:  # type: ignore[arg-type]
        reranker = ScoreApiReranker(server.url, protocol="vllm-score", model="m", api_key=KEY,
                                    max_retries=0)
        with caplog.at_level(logging.DEBUG, logger="thalabus_graph"):
            try:
                reply = run_sync(reranker.score("q", [Passage("f-1", "text", 0.5)]))
                shown = repr(reply)
            except ServiceError as exc:
                shown = str(exc)
    assert "403" in shown or "403" in caplog.text
    for text in (shown, caplog.text):
        assert "SECRETKEY" not in text and OTHER not in text


def test_a_neo4j_uri_with_user_info_is_never_printed(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("NEO4J_URI", "bolt://neo4j:PW-s3cret@127.0.0.1:1")
    for extra in ([], ["--json"]):
        assert main(["query", '"zebra"', *extra]) == 2
        captured = capsys.readouterr()
        assert "PW-s3cret" not in captured.err + captured.out
        assert "bolt://***@127.0.0.1:1" in captured.err


def test_settings_show_no_url_user_info() -> None:
    settings = Settings(reranker_url="http://user:PW-s3cret@h:1", embedder_url="http://k@h:2")
    assert "PW-s3cret" not in repr(settings) and "k@" not in repr(settings)
