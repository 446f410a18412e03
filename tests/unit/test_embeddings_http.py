"""OpenAIEmbedder against scripted servers: a real loopback http.server for faults that need
a socket (timeouts, 500 then success, 429 with Retry-After, refused connections) and
httpx.MockTransport for protocol edge cases (order, shape, base64, count, dimension)."""

from __future__ import annotations

import base64
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import numpy as np
import pytest

from thalabus_graph.embeddings import OpenAIEmbedder
from thalabus_graph.errors import (
    ConfigurationError,
    RateLimited,
    RetryableServiceError,
    ServiceReplyError,
    ServiceStatusError,
    ServiceTimeout,
)

DIM = 4


def unit(i: int, dim: int = DIM) -> list[float]:
    """A recognisable, non-normalised vector for input number i."""
    return [float(i + 1), 2.0, 0.0, 0.0][:dim] + [0.0] * max(0, dim - 4)


def reply(n: int, *, order: Iterator[int] | None = None, dim: int = DIM,
          b64: bool = False) -> dict[str, Any]:
    indices = list(order) if order is not None else list(range(n))
    data = []
    for i in indices:
        vec = unit(i, dim)
        emb: Any = base64.b64encode(np.asarray(vec, "<f4").tobytes()).decode() if b64 else vec
        data.append({"object": "embedding", "index": i, "embedding": emb})
    return {"object": "list", "data": data, "model": "m",
            "usage": {"prompt_tokens": 1, "total_tokens": 1}}


def expected(n: int) -> np.ndarray[Any, np.dtype[np.float32]]:
    rows = np.asarray([unit(i) for i in range(n)], dtype=np.float32)
    out: np.ndarray[Any, np.dtype[np.float32]] = rows / np.linalg.norm(rows, axis=1,
                                                                        keepdims=True)
    return out


# --- a scripted loopback server -------------------------------------------------------------


@dataclass
class Step:
    """One scripted answer: status, headers, body (None = a correct reply), delay; with
    ``hold``, no answer until the test sets it (at most a minute, so a broken client timeout
    fails the test instead of hanging it)."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    delay: float = 0.0
    hold: threading.Event | None = None


class ScriptedServer:
    """Answers POST /v1/embeddings with the next scripted Step (the last one repeats)."""

    def __init__(self, steps: list[Step]) -> None:
        self.steps = steps
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                with server.lock:
                    server.requests.append(body)
                    server.headers.append(dict(self.headers))
                    n = len(server.requests)
                    step = server.steps[min(n - 1, len(server.steps) - 1)]
                if step.delay:
                    time.sleep(step.delay)
                if step.hold is not None:
                    step.hold.wait(60)
                payload = step.body
                if payload is None:
                    payload = json.dumps(reply(len(body["input"]))).encode()
                try:
                    self.send_response(step.status)
                    for key, value in step.headers.items():
                        self.send_header(key, value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass                      # the client gave up (timeout test)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,),
                                       daemon=True)

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class Sleeps:
    """Records the backoff delays instead of sleeping."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def make(url: str, sleeps: Sleeps | None = None, **kwargs: Any) -> OpenAIEmbedder:
    options: dict[str, Any] = {"dimensions": DIM, "max_retries": 3, "timeout": 5.0}
    options.update(kwargs)
    return OpenAIEmbedder(url, "m", sleep=sleeps or Sleeps(), **options)


# --- faults over a real socket --------------------------------------------------------------


def test_500_then_success_is_retried() -> None:
    sleeps = Sleeps()
    with ScriptedServer([Step(500, body=b'{"error": "boom"}'), Step()]) as server:
        out = make(server.url, sleeps).embed_passages(["a", "b"])
    np.testing.assert_allclose(out, expected(2), atol=1e-6)
    assert len(server.requests) == 2
    assert len(sleeps.delays) == 1
    assert 0.25 <= sleeps.delays[0] <= 0.5          # backoff_base 0.5 with jitter


def test_429_honours_retry_after() -> None:
    sleeps = Sleeps()
    steps = [Step(429, {"Retry-After": "2"}, b"{}"), Step(429, {"Retry-After": "0.5"}, b"{}"),
             Step()]
    with ScriptedServer(steps) as server:
        out = make(server.url, sleeps).embed_queries(["q"])
    assert out.shape == (1, DIM)
    assert sleeps.delays == [2.0, 0.5]


def test_429_until_retries_run_out_raises_rate_limited() -> None:
    sleeps = Sleeps()
    with (ScriptedServer([Step(429, {"Retry-After": "7"}, b"{}")]) as server,
          pytest.raises(RateLimited) as info):
        make(server.url, sleeps, max_retries=2).embed_queries(["q"])
    assert info.value.retry_after == 7.0
    assert len(server.requests) == 3
    assert sleeps.delays == [7.0, 7.0]


def test_timeout_is_retried_then_reported() -> None:
    sleeps = Sleeps()
    answer = threading.Event()  # never set while the client waits: each attempt must give up
    with ScriptedServer([Step(hold=answer)]) as server:
        try:
            with pytest.raises(ServiceTimeout, match=r"did not answer within 0\.2s"):
                make(server.url, sleeps, timeout=0.2, max_retries=1).embed_passages(["slow"])
        finally:
            answer.set()
    assert len(server.requests) == 2
    assert len(sleeps.delays) == 1


def test_timeout_then_success() -> None:
    with ScriptedServer([Step(delay=1.0), Step()]) as server:
        out = make(server.url, timeout=0.2).embed_passages(["x"])
    assert out.shape == (1, DIM)


def test_503_until_retries_run_out() -> None:
    sleeps = Sleeps()
    with (ScriptedServer([Step(503, body=b"overloaded")]) as server,
          pytest.raises(RetryableServiceError, match="HTTP 503: overloaded")):
        make(server.url, sleeps, max_retries=2).embed_passages(["x"])
    assert len(server.requests) == 3
    first, second = sleeps.delays                 # exponential: 0.5 s then 1 s, jittered
    assert 0.25 <= first <= 0.5
    assert 0.5 <= second <= 1.0


def test_4xx_is_not_retried() -> None:
    body = b'{"error": {"message": "model not found"}}'
    with (ScriptedServer([Step(404, body=body)]) as server,
          pytest.raises(ServiceStatusError, match=r"HTTP 404.*model not found") as info):
        make(server.url).embed_passages(["x"])
    assert info.value.status_code == 404
    assert len(server.requests) == 1


def test_connection_refused_is_retried_then_reported() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]              # closed again: nobody listens there
    sleeps = Sleeps()
    with pytest.raises(RetryableServiceError, match="cannot reach"):
        make(f"http://127.0.0.1:{port}", sleeps, max_retries=2).embed_passages(["x"])
    assert len(sleeps.delays) == 2


def test_malformed_json_reply_over_http() -> None:
    with (ScriptedServer([Step(200, body=b"<html>gateway</html>")]) as server,
          pytest.raises(ServiceReplyError, match="not JSON")):
        make(server.url).embed_passages(["x"])
    assert len(server.requests) == 1             # a bad reply is not retried


def test_request_body_and_headers() -> None:
    with ScriptedServer([Step()]) as server:
        emb = make(server.url + "/v1", api_key="sk-test", encoding_format="float")
        emb.embed_queries(["q1"])
        emb.embed_passages(["p1"])
        plain = make(server.url, input_type=False, query_prefix="query: ")
        plain.embed_queries(["q2"])
    assert server.requests[0] == {"input": ["q1"], "model": "m", "encoding_format": "float",
                                  "input_type": "query"}
    assert server.requests[1]["input_type"] == "passage"
    assert server.requests[2] == {"input": ["query: q2"], "model": "m",
                                  "encoding_format": "float"}
    assert server.headers[0]["Authorization"] == "Bearer sk-test"
    assert "Authorization" not in server.headers[2]


# --- protocol edge cases with MockTransport -------------------------------------------------


def mock(handler: Callable[[httpx.Request], httpx.Response], **kwargs: Any) -> OpenAIEmbedder:
    return make("http://embed.test", transport=httpx.MockTransport(handler), **kwargs)


def json_handler(build: Callable[[list[str]], Any]) -> Callable[[httpx.Request], httpx.Response]:
    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        return httpx.Response(200, json=build(body["input"]))
    return handler


def test_maps_by_index_not_position() -> None:
    emb = mock(json_handler(lambda texts: reply(len(texts), order=iter([2, 0, 1]))))
    np.testing.assert_allclose(emb.embed_passages(["a", "b", "c"]), expected(3), atol=1e-6)


def test_base64_reply_is_decoded() -> None:
    emb = mock(json_handler(lambda texts: reply(len(texts), b64=True)),
               encoding_format="base64")
    out = emb.embed_passages(["a", "b"])
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, expected(2), atol=1e-6)


def test_vectors_are_renormalised() -> None:
    emb = mock(json_handler(lambda texts: reply(len(texts))))
    np.testing.assert_allclose(np.linalg.norm(emb.embed_passages(["a"]), axis=1), 1.0)


@pytest.mark.parametrize(("build", "message"), [
    (lambda n: reply(n, dim=DIM + 2), "has 6 dimensions, expected 4"),
    (lambda n: reply(n - 1), "holds 1 embeddings for 2 inputs"),
    (lambda n: {"object": "list"}, "no 'data' list"),
    (lambda n: [1, 2], "no 'data' list"),
    (lambda n: {"data": [{"index": 0, "embedding": [1.0] * 4}, "x"]}, "not an object"),
    (lambda n: {"data": [{"embedding": [1.0] * 4}] * 2}, "bad or missing index"),
    (lambda n: {"data": [{"index": 0, "embedding": [1.0] * 4}] * 2}, "index 0 appears twice"),
    (lambda n: {"data": [{"index": i, "embedding": [1.0] * 4} for i in (0, 5)]},
     "bad or missing index 5"),
    (lambda n: {"data": [{"index": i, "embedding": ["a"] * 4} for i in range(n)]},
     "not a list of numbers"),
    (lambda n: {"data": [{"index": i, "embedding": "!!notb64"} for i in range(n)]},
     "not base64"),
    (lambda n: {"data": [{"index": i, "embedding": "AAAAAA=="} for i in range(n)]},
     "has 1 dimensions"),
    (lambda n: {"data": [{"index": i, "embedding": "AAA="} for i in range(n)]},
     "not a float32 array"),
    (lambda n: {"data": [{"index": i, "embedding": [0.0] * 4} for i in range(n)]},
     "zero vector"),
])
def test_malformed_replies(build: Callable[[int], Any], message: str) -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(200, json=build(2))

    with pytest.raises(ServiceReplyError, match=message):
        mock(handler).embed_passages(["a", "b"])
    assert len(calls) == 1


def test_batches_keep_order_and_bound_concurrency() -> None:
    in_flight = 0
    peak = 0
    sizes: list[int] = []
    lock = threading.Lock()

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, peak
        texts = json.loads(request.content)["input"]
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
            sizes.append(len(texts))
        time.sleep(0.05)
        with lock:
            in_flight -= 1
        # each vector encodes its text's number, so order across batches is checkable
        data = [{"index": i, "embedding": [float(t), 1.0, 0.0, 0.0]}
                for i, t in enumerate(texts)]
        return httpx.Response(200, json={"data": data})

    emb = mock(handler, batch_size=3, max_concurrency=2)
    texts = [str(i) for i in range(1, 11)]
    out = emb.embed_passages(texts)
    assert sorted(sizes) == [1, 3, 3, 3]
    assert peak == 2
    firsts = out[:, 0] / out[:, 1]
    np.testing.assert_allclose(firsts, np.arange(1, 11), rtol=1e-5)


def test_transport_error_in_mock_is_retried() -> None:
    attempts = []

    def handler(request: httpx.Request) -> httpx.Response:
        attempts.append(1)
        if len(attempts) == 1:
            raise httpx.ConnectError("refused", request=request)
        return httpx.Response(200, json=reply(1))

    assert mock(handler).embed_passages(["x"]).shape == (1, DIM)
    assert len(attempts) == 2


def test_retry_after_as_http_date() -> None:
    sleeps = Sleeps()
    when = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))
    answers = [httpx.Response(429, headers={"Retry-After": when}),
               httpx.Response(200, json=reply(1))]
    emb = mock(lambda request: answers.pop(0), sleeps=sleeps)
    emb.embed_queries(["q"])
    assert 25 <= sleeps.delays[0] <= 31


def test_empty_input_makes_no_request() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise AssertionError("no request expected")

    out = mock(handler).embed_passages([])
    assert out.shape == (0, DIM)
    assert out.dtype == np.float32


def test_injected_client_is_used_and_not_closed() -> None:
    client = httpx.Client(transport=httpx.MockTransport(json_handler(lambda t: reply(len(t)))))
    with OpenAIEmbedder("http://x/v1", "m", dimensions=DIM, client=client) as emb:
        emb.embed_passages(["a"])
    assert not client.is_closed
    client.close()


@pytest.mark.parametrize("kwargs", [
    {"dimensions": 0}, {"batch_size": 0}, {"max_concurrency": 0}, {"max_retries": -1},
    {"timeout": 0}, {"encoding_format": "hex"},
])
def test_bad_configuration(kwargs: dict[str, Any]) -> None:
    options: dict[str, Any] = {"dimensions": DIM, **kwargs}
    with pytest.raises(ConfigurationError):
        OpenAIEmbedder("http://x", "m", **options)
    with pytest.raises(ConfigurationError):
        OpenAIEmbedder("", "m", dimensions=DIM)
