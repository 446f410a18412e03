"""ScoreApiReranker against real HTTP servers on 127.0.0.1, one per wire format and failure."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.loopback import (
    LoopbackServer,
    Request,
    Response,
    overlap_score,
    parse_score_request,
    score_handler,
    score_reply,
)
from thalabus_graph._http import RetryPolicy
from thalabus_graph.errors import (
    ConfigurationError,
    RateLimited,
    RetryableServiceError,
    ServiceReplyError,
    ServiceStatusError,
    ServiceTimeout,
)
from thalabus_graph.rerank import (
    NoReranking,
    Passage,
    ScoreApiReranker,
    reranker_from_settings,
)
from thalabus_graph.rerank.score_api import PROTOCOLS, endpoint_url
from thalabus_graph.settings import Settings

QUERY = "bob the cat"
PASSAGES = [
    Passage("docid-1-c1", "bob the cat sleeps", 0.5),
    Passage("docid-1-c2", "a dog barks", 0.6),
    Passage("docid-2-c1", "the cat", 0.7),
    Passage("docid-3-c1", "bob", 0.8),
    Passage("docid-4-c1", "nothing here", 0.9),
]
EXPECTED = {p.fragmentid: overlap_score(QUERY, p.text) for p in PASSAGES}


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer(lambda r: Response(status=500)) as s:
        yield s


def make(server: LoopbackServer, protocol: str = "vllm-score", **kw: Any) -> ScoreApiReranker:
    kw.setdefault("model", "m")
    kw.setdefault("backoff_seconds", 0.01)
    return ScoreApiReranker(server.url, protocol=protocol, **kw)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("batch_size", [1, 2, 32])
def test_every_wire_format_maps_results_by_index(
    server: LoopbackServer, protocol: str, batch_size: int
) -> None:
    server.handler = score_handler(protocol)
    reply = asyncio.run(make(server, protocol, batch_size=batch_size).score(QUERY, PASSAGES))
    assert reply.ok
    assert dict(reply.scores) == pytest.approx(EXPECTED)
    assert len(server.requests) == -(-len(PASSAGES) // batch_size)
    assert reply.usage["requests"] == len(server.requests)
    path = server.requests[0].path
    assert path == {"vllm-score": "/score", "vllm-rerank": "/rerank", "tei": "/rerank",
                    "cohere": "/v2/rerank", "jina": "/v1/rerank"}[protocol]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_request_bodies_follow_the_documented_formats(
    server: LoopbackServer, protocol: str
) -> None:
    server.handler = score_handler(protocol)
    asyncio.run(make(server, protocol, batch_size=2, api_key="k").score(QUERY, PASSAGES[:2]))
    request = server.requests[0]
    body = request.json()
    assert request.headers.get("Authorization") == "Bearer k"
    query, texts = parse_score_request(protocol, body)
    assert (query, texts) == (QUERY, [p.text for p in PASSAGES[:2]])
    if protocol == "tei":
        assert "model" not in body and body["truncate"] is True
    else:
        assert body["model"] == "m"
    if protocol in ("cohere", "jina"):
        assert body["top_n"] == 2


def test_one_call_per_fragment_sends_a_single_text(server: LoopbackServer) -> None:
    server.handler = score_handler("vllm-score")
    asyncio.run(make(server, batch_size=1).score(QUERY, PASSAGES))
    bodies = [r.json() for r in server.requests]
    assert len(bodies) == len(PASSAGES)
    assert all(isinstance(b["text_2"], str) for b in bodies)


def test_passages_are_cut_at_max_chars(server: LoopbackServer) -> None:
    server.handler = score_handler("tei")
    long = Passage("docid-9-c1", "x" * 100)
    asyncio.run(make(server, "tei", max_chars=24).score(QUERY, [long]))
    assert server.requests[0].json()["texts"] == ["x" * 24]


def test_parallelism_is_bounded(server: LoopbackServer) -> None:
    server.handler = score_handler("vllm-score", delay=0.05)
    passages = [Passage(f"docid-{i}-c1", "bob") for i in range(12)]
    reply = asyncio.run(make(server, batch_size=1, max_parallelism=3).score(QUERY, passages))
    assert len(reply.scores) == 12
    assert 1 < server.max_in_flight <= 3


def test_timeout_fails_only_the_slow_batch(server: LoopbackServer) -> None:
    inner = score_handler("vllm-score")

    def handle(request: Request) -> Response:
        response = inner(request)
        if "slow" in str(request.json()["text_2"]):
            response.delay = 1.0
        return response

    server.handler = handle
    passages = [Passage("docid-1-c1", "bob"), Passage("docid-2-c1", "slow cat")]
    reranker = make(server, batch_size=1, timeout_seconds=0.2, max_retries=1)
    reply = asyncio.run(reranker.score(QUERY, passages))
    assert set(reply.scores) == {"docid-1-c1"}
    assert [f.passage_ids for f in reply.failures] == [("docid-2-c1",)]
    assert isinstance(reply.failures[0].error, ServiceTimeout)
    assert reply.failure_kind() == "timeout"


def test_server_errors_are_retried_then_succeed(server: LoopbackServer) -> None:
    inner = score_handler("jina")
    calls = {"n": 0}

    def handle(request: Request) -> Response:
        calls["n"] += 1
        return Response(status=503) if calls["n"] <= 2 else inner(request)

    server.handler = handle
    reply = asyncio.run(make(server, "jina", max_retries=3).score(QUERY, PASSAGES))
    assert reply.ok and dict(reply.scores) == pytest.approx(EXPECTED)
    assert len(server.requests) == 3


def test_persistent_500_is_reported_not_raised(server: LoopbackServer) -> None:
    server.handler = lambda r: Response(status=500, raw=b"boom")
    reply = asyncio.run(make(server, max_retries=2).score(QUERY, PASSAGES))
    assert reply.scores == {}
    assert len(server.requests) == 3  # one try + two retries
    assert isinstance(reply.failures[0].error, RetryableServiceError)
    assert reply.failures[0].passage_ids == tuple(p.fragmentid for p in PASSAGES)


def test_429_honours_retry_after(server: LoopbackServer,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []
    real = RetryPolicy.delay

    def delay(policy: RetryPolicy, attempt: int, retry_after: float | None) -> float:
        waits.append(real(policy, attempt, retry_after))
        return waits[-1]

    monkeypatch.setattr(RetryPolicy, "delay", delay)
    inner = score_handler("cohere")
    calls = {"n": 0}

    def handle(request: Request) -> Response:
        calls["n"] += 1
        if calls["n"] == 1:
            return Response(status=429, headers={"Retry-After": "0.4"})
        return inner(request)

    server.handler = handle
    reply = asyncio.run(make(server, "cohere", backoff_seconds=0.0).score(QUERY, PASSAGES))
    assert waits == [0.4]
    assert reply.ok and dict(reply.scores) == pytest.approx(EXPECTED)


def test_429_without_budget_left_is_rate_limited(server: LoopbackServer) -> None:
    server.handler = lambda r: Response(status=429, headers={"Retry-After": "0"})
    reply = asyncio.run(make(server, max_retries=1).score(QUERY, PASSAGES))
    error = reply.failures[0].error
    assert isinstance(error, RateLimited) and error.retry_after == 0.0
    assert len(server.requests) == 2


def test_client_errors_are_not_retried(server: LoopbackServer) -> None:
    server.handler = lambda r: Response(status=400, json_body={"error": "bad"})
    reply = asyncio.run(make(server, max_retries=3).score(QUERY, PASSAGES))
    error = reply.failures[0].error
    assert isinstance(error, ServiceStatusError) and error.status_code == 400
    assert len(server.requests) == 1


def _bad(protocol: str, mutate: Any) -> Any:
    def handle(request: Request) -> Response:
        query, texts = parse_score_request(protocol, request.json())
        return mutate(score_reply(protocol, query, texts, overlap_score))

    return handle


def _results_key(protocol: str) -> str:
    return "data" if protocol == "vllm-score" else "results"


BAD_REPLIES = {
    "not json": lambda p: (lambda reply: Response(raw=b"{not json")),
    "html error page": lambda p: (lambda reply: Response(raw=b"<html>oops</html>")),
    "too few": lambda p: (
        lambda reply: Response(json_body=reply[:-1] if p == "tei" else
                               {**reply, _results_key(p): reply[_results_key(p)][:-1]})
    ),
    "unknown index": lambda p: (
        lambda reply: Response(json_body=_set_index(p, reply, 99))
    ),
    "repeated index": lambda p: (
        lambda reply: Response(json_body=_set_index(p, reply, _items(p, reply)[1]["index"]))
    ),
    "string score": lambda p: (lambda reply: Response(json_body=_set_score(p, reply, "high"))),
    "null score": lambda p: (lambda reply: Response(json_body=_set_score(p, reply, None))),
    "wrong shape": lambda p: (lambda reply: Response(json_body={"scores": [0.1, 0.2]})),
}


def _items(protocol: str, reply: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = reply if protocol == "tei" else reply[_results_key(protocol)]
    return items


def _set_index(protocol: str, reply: Any, index: Any) -> Any:
    _items(protocol, reply)[0]["index"] = index
    return reply


def _set_score(protocol: str, reply: Any, value: Any) -> Any:
    key = "score" if protocol in ("tei", "vllm-score") else "relevance_score"
    _items(protocol, reply)[0][key] = value
    return reply


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("case", sorted(BAD_REPLIES))
def test_bad_replies_give_no_scores_and_a_reported_failure(
    server: LoopbackServer, protocol: str, case: str
) -> None:
    server.handler = _bad(protocol, BAD_REPLIES[case](protocol))
    reply = asyncio.run(make(server, protocol, batch_size=3).score(QUERY, PASSAGES))
    assert reply.scores == {}
    assert len(reply.failures) == 2  # two batches, both bad
    assert all(isinstance(e, ServiceReplyError) for e in reply.errors)
    assert reply.failure_kind() == "invalid"
    with pytest.raises(ServiceReplyError):
        reply.raise_for_failures()


def test_one_bad_batch_does_not_spoil_the_others(server: LoopbackServer) -> None:
    good = score_handler("tei")

    def handle(request: Request) -> Response:
        if "nothing here" in request.json()["texts"]:
            return Response(json_body=[{"index": 7, "score": 1.0}])
        return good(request)

    server.handler = handle
    reply = asyncio.run(make(server, "tei", batch_size=2).score(QUERY, PASSAGES))
    assert set(reply.scores) == {p.fragmentid for p in PASSAGES[:4]}
    assert [f.passage_ids for f in reply.failures] == [("docid-4-c1",)]


def test_connection_refused_is_reported(server: LoopbackServer) -> None:
    url = server.url
    server.stop()
    reranker = ScoreApiReranker(url, max_retries=1, backoff_seconds=0.0)
    reply = asyncio.run(reranker.score(QUERY, PASSAGES[:1]))
    assert reply.scores == {} and isinstance(reply.errors[0], RetryableServiceError)


def test_injected_client_and_mock_transport() -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        import json

        body = json.loads(request.content)
        return httpx.Response(200, json=score_reply("tei", body["query"], body["texts"],
                                                    overlap_score))

    transport = httpx.MockTransport(handle)
    reranker = ScoreApiReranker("http://scorer", protocol="tei", transport=transport)
    assert dict(asyncio.run(reranker.score(QUERY, PASSAGES)).scores) == pytest.approx(EXPECTED)

    async def with_client() -> dict[str, float]:
        async with httpx.AsyncClient(transport=transport) as client:
            r = ScoreApiReranker("http://scorer", protocol="tei", client=client)
            first = await r.score(QUERY, PASSAGES)
            second = await r.score(QUERY, PASSAGES)  # the borrowed client stays open
            assert first.scores == second.scores
            return dict(first.scores)

    assert asyncio.run(with_client()) == pytest.approx(EXPECTED)


def test_one_reranker_serves_several_event_loops(server: LoopbackServer) -> None:
    server.handler = score_handler("vllm-score", delay=0.01)
    reranker = make(server, batch_size=1, max_parallelism=2)
    for _ in range(2):
        assert len(asyncio.run(reranker.score(QUERY, PASSAGES)).scores) == len(PASSAGES)
    results: list[int] = []
    thread = threading.Thread(
        target=lambda: results.append(len(asyncio.run(reranker.score(QUERY, PASSAGES)).scores))
    )
    thread.start()
    thread.join()
    assert results == [len(PASSAGES)]


def test_empty_input_makes_no_request(server: LoopbackServer) -> None:
    reply = asyncio.run(make(server).score(QUERY, []))
    assert reply.scores == {} and reply.ok and server.requests == []


def test_endpoint_urls() -> None:
    assert endpoint_url("http://h:8000", "vllm-score") == "http://h:8000/score"
    assert endpoint_url("http://h:8000/v1", "vllm-rerank") == "http://h:8000/v1/rerank"
    assert endpoint_url("http://h/v2/rerank", "vllm-rerank") == "http://h/v2/rerank"
    assert endpoint_url("https://api.cohere.com", "cohere") == "https://api.cohere.com/v2/rerank"
    assert endpoint_url("https://api.cohere.com/v2", "cohere") == "https://api.cohere.com/v2/rerank"
    assert endpoint_url("https://api.jina.ai/v1/", "jina") == "https://api.jina.ai/v1/rerank"
    with pytest.raises(ConfigurationError):
        endpoint_url("http://h", "openai")


def test_construction_checks_and_does_no_io() -> None:
    with pytest.raises(ConfigurationError):
        ScoreApiReranker("http://127.0.0.1:1", batch_size=0)
    with pytest.raises(ConfigurationError):
        ScoreApiReranker("http://127.0.0.1:1", max_parallelism=0)
    with pytest.raises(ConfigurationError):
        ScoreApiReranker("http://127.0.0.1:1", protocol="cohere")  # no model
    with pytest.raises(ConfigurationError):
        ScoreApiReranker("")
    assert ScoreApiReranker("http://127.0.0.1:1").available


def test_factory() -> None:
    assert isinstance(reranker_from_settings(Settings()), NoReranking)
    r = reranker_from_settings(Settings(reranker_url="http://h:1", reranker_protocol="jina",
                                        reranker_model="jina-reranker-v2",
                                        reranker_batch_size=7, max_parallelism=3))
    assert isinstance(r, ScoreApiReranker)
    assert (r.endpoint, r.batch_size, r.max_parallelism) == ("http://h:1/v1/rerank", 7, 3)
    with pytest.raises(ConfigurationError):
        reranker_from_settings(Settings(reranker_url="http://h:1", reranker_protocol="x"))
