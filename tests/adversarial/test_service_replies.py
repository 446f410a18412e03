"""Hostile inference services: a reply dripped a byte at a time, a reply larger than any batch
needs. Each request has a whole-request deadline and a reply-size cap, read as the reply
streams in; a score server's failure is a failed batch (the degraded flag), an embedder's an
error. What the server managed to send is counted on its side, so the tests measure bytes, not
seconds: without the deadline the client would read a dripped reply to its end, without the
cap a large one whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.support.loopback import LoopbackServer, Request, Response, score_reply
from thalabus_graph.embeddings import OpenAIEmbedder, embedder_from_settings
from thalabus_graph.errors import ServiceReplyError, ServiceTimeout
from thalabus_graph.rerank import Passage, ScoreApiReranker, reranker_from_settings
from thalabus_graph.rerank.rounds import rerank_in_rounds_sync
from thalabus_graph.settings import Settings

DRIP = 0.2
"""Seconds between two bytes of a dripped reply."""
PADDED = 300
"""Bytes of a dripped reply: a minute of dripping, where the deadline allows one second."""
MIB = 1024 * 1024
PASSAGES = [Passage("d-1-c1", "bob the cat", 0.5), Passage("d-2-c1", "a dog", 0.4)]


def padded(body: object) -> bytes:
    """``body`` as JSON, padded with trailing spaces (still valid JSON) to ``PADDED`` bytes."""
    raw = json.dumps(body).encode()
    return raw + b" " * max(0, PADDED - len(raw))


def scores(request: Request) -> object:
    body = request.json()
    return score_reply("vllm-score", body["text_1"], list(body["text_2"]), lambda q, t: 0.5)


def embeddings(request: Request) -> object:
    count = len(request.json()["input"])
    return {"data": [{"index": i, "embedding": [1.0, 0.0, 0.0]} for i in range(count)]}


def chunks(total: int, size: int = 64 * 1024) -> Iterator[bytes]:
    """``total`` bytes of one JSON string, in pieces of ``size``."""
    yield b'{"data": "'
    piece = b"x" * size
    for _ in range(total // size):
        yield piece
    yield b'"}'


def test_a_dripping_score_server_fails_the_batch_at_the_deadline() -> None:
    with LoopbackServer(lambda r: Response(raw=padded(scores(r)), drip=DRIP)) as server:
        reranker = ScoreApiReranker(server.url, timeout_seconds=1.0, max_retries=0)
        result = rerank_in_rounds_sync([PASSAGES], "cat", reranker)
        sent = server.bytes_sent
    assert not result.reranked and result.reason == "failed" and result.degraded
    assert all(isinstance(f.error, ServiceTimeout) for f in result.failures)
    assert "whole reply" in str(result.failures[0].error)
    assert sent < PADDED // 2


def test_a_dripping_embedder_fails_at_the_deadline() -> None:
    with LoopbackServer(lambda r: Response(raw=padded(embeddings(r)), drip=DRIP)) as server:
        embedder = OpenAIEmbedder(server.url, "m", dimensions=3, timeout=1.0, max_retries=0)
        with pytest.raises(ServiceTimeout, match="whole reply"):
            embedder.embed_queries(["bob"])
        embedder.close()
        sent = server.bytes_sent
    assert sent < PADDED // 2


def test_a_score_reply_over_the_cap_fails_the_batch_as_it_streams() -> None:
    total = 64 * MIB
    with LoopbackServer(lambda r: Response(chunks=chunks(total))) as server:
        settings = Settings(reranker_url=server.url, service_max_reply_bytes=MIB,
                            reranker_max_retries=0)
        reply = rerank_in_rounds_sync([PASSAGES], "cat", reranker_from_settings(settings))
        sent = server.bytes_sent
    assert not reply.reranked and reply.reason == "failed"
    error = reply.failures[0].error
    assert isinstance(error, ServiceReplyError)
    assert "THALABUS_SERVICE_MAX_REPLY_BYTES" in str(error)
    assert sent < total // 4


def test_an_embedding_reply_over_the_cap_fails_as_it_streams() -> None:
    total = 64 * MIB
    with LoopbackServer(lambda r: Response(chunks=chunks(total))) as server:
        settings = Settings(embedder_url=server.url, embedding_dimensions=3,
                            service_max_reply_bytes=MIB, embedder_max_retries=0)
        embedder = embedder_from_settings(settings, cache=False)
        with pytest.raises(ServiceReplyError, match="THALABUS_SERVICE_MAX_REPLY_BYTES"):
            embedder.embed_passages(["bob"])
        sent = server.bytes_sent
    assert sent < total // 4


def test_a_declared_length_over_the_cap_is_refused_before_the_body() -> None:
    with LoopbackServer(lambda r: Response(raw=b" " * (2 * MIB))) as server:
        reranker = ScoreApiReranker(server.url, max_retries=0, max_reply_bytes=MIB)
        reply = rerank_in_rounds_sync([PASSAGES], "cat", reranker)
    error = reply.failures[0].error
    assert isinstance(error, ServiceReplyError) and str(2 * MIB) in str(error)


def test_a_reply_within_the_deadline_and_the_cap_is_read_whole() -> None:
    with LoopbackServer(lambda r: Response(raw=padded(scores(r)))) as server:
        reranker = ScoreApiReranker(server.url, timeout_seconds=5.0, max_reply_bytes=PADDED)
        result = rerank_in_rounds_sync([PASSAGES], "cat", reranker)
    assert result.reranked and not result.failures
