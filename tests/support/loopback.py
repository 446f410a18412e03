"""A loopback HTTP server that speaks the scoring wire formats, for tests and benchmarks.

Standard library only: a ``ThreadingHTTPServer`` on 127.0.0.1 with a pluggable handler, plus
handlers that answer vLLM / TEI / Cohere / Jina scoring requests (results shuffled on purpose).
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


@dataclass(frozen=True)
class Request:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        """The body decoded as JSON."""
        return json.loads(self.body)


@dataclass
class Response:
    """What a handler answers: ``json_body`` is encoded unless ``raw`` is given.

    ``drip``: seconds between the body's bytes, sent one at a time (a slow-drip server).
    ``chunks``: a body streamed in these pieces with chunked transfer encoding (no
    Content-Length), instead of ``json_body`` / ``raw``. The server counts what it sent in
    ``LoopbackServer.bytes_sent`` and stops when the client has gone.
    """

    status: int = 200
    json_body: Any = None
    raw: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drip: float = 0.0
    chunks: Iterable[bytes] | None = None


Handler = Callable[[Request], Response]


class LoopbackServer:
    """A threaded HTTP server on an ephemeral 127.0.0.1 port; use as a context manager.

    Example:
        >>> with LoopbackServer(lambda req: Response(json_body={"ok": True})) as server:
        ...     server.url.startswith("http://127.0.0.1:")
        True
    """

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[Request] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.bytes_sent = 0
        """Body bytes written to clients, over every request."""
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        assert self._server is not None, "server not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> LoopbackServer:
        """Bind and serve in a daemon thread."""
        outer = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out in separate writes

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                request = Request("POST", self.path, dict(self.headers.items()), body)
                with outer._lock:
                    outer.requests.append(request)
                    outer.in_flight += 1
                    outer.max_in_flight = max(outer.max_in_flight, outer.in_flight)
                try:
                    response = outer.handler(request)
                    if response.delay:
                        time.sleep(response.delay)
                    payload = (
                        response.raw
                        if response.raw is not None
                        else json.dumps(response.json_body).encode()
                    )
                finally:
                    with outer._lock:
                        outer.in_flight -= 1
                self.send_response(response.status)
                self.send_header("Content-Type", "application/json")
                if response.chunks is None:
                    self.send_header("Content-Length", str(len(payload)))
                else:
                    self.send_header("Transfer-Encoding", "chunked")
                for key, value in response.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                try:
                    self._send_body(response, payload)
                except OSError:
                    self.close_connection = True  # the client gave up: stop sending

            def _send_body(self, response: Response, payload: bytes) -> None:
                if response.chunks is not None:
                    for chunk in response.chunks:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        outer._sent(len(chunk))
                    self.wfile.write(b"0\r\n\r\n")
                elif response.drip:
                    for i in range(len(payload)):
                        self.wfile.write(payload[i:i + 1])
                        self.wfile.flush()
                        outer._sent(1)
                        time.sleep(response.drip)
                else:
                    self.wfile.write(payload)
                    outer._sent(len(payload))

        class _Server(ThreadingHTTPServer):
            daemon_threads = True
            block_on_close = False

            def handle_error(self, request: Any, client_address: Any) -> None:
                return  # clients that gave up (timeouts) are expected

        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def _sent(self, count: int) -> None:
        with self._lock:
            self.bytes_sent += count

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


Scorer = Callable[[str, str], float]


def overlap_score(query: str, text: str) -> float:
    """A toy relevance: share of query words found in the text, in [0, 1]."""
    words = set(query.lower().split())
    if not words:
        return 0.0
    return len(words & set(text.lower().split())) / len(words)


def score_reply(protocol: str, query: str, texts: list[str], scorer: Scorer,
                rng: random.Random | None = None) -> Any:
    """A well-formed reply of ``protocol`` scoring ``texts``, results in shuffled order."""
    order = list(range(len(texts)))
    (rng or random.Random(0)).shuffle(order)
    scores = {i: scorer(query, texts[i]) for i in order}
    if protocol == "vllm-score":
        data = [{"index": i, "object": "score", "score": scores[i]} for i in order]
        return {"id": "score-1", "object": "list", "created": 0, "model": "m", "data": data,
                "usage": {"prompt_tokens": 10 * len(texts), "total_tokens": 10 * len(texts)}}
    if protocol == "tei":
        return [{"index": i, "score": scores[i]} for i in order]
    results: list[dict[str, Any]] = [{"index": i, "relevance_score": scores[i]} for i in order]
    if protocol == "vllm-rerank":
        documents = [{"index": i, "document": {"text": texts[i]}, "relevance_score": scores[i]}
                     for i in order]
        return {"id": "rerank-1", "model": "m", "usage": {"total_tokens": 10 * len(texts)},
                "results": documents}
    if protocol == "cohere":
        return {"id": "c-1", "results": results,
                "meta": {"billed_units": {"search_units": 1}}}
    return {"model": "m", "usage": {"total_tokens": 10 * len(texts)}, "results": results}


def parse_score_request(protocol: str, body: Any) -> tuple[str, list[str]]:
    """The query and passage texts of a scoring request in ``protocol``."""
    if protocol == "vllm-score":
        texts = body["text_2"]
        return body["text_1"], [texts] if isinstance(texts, str) else list(texts)
    if protocol == "tei":
        return body["query"], list(body["texts"])
    return body["query"], list(body["documents"])


def score_handler(protocol: str, scorer: Scorer = overlap_score, *, delay: float = 0.0,
                  seed: int = 0) -> Handler:
    """A handler that answers ``protocol`` scoring requests with ``scorer``, after ``delay``."""
    rng = random.Random(seed)
    lock = threading.Lock()

    def handle(request: Request) -> Response:
        query, texts = parse_score_request(protocol, request.json())
        with lock:
            reply = score_reply(protocol, query, texts, scorer, random.Random(rng.random()))
        return Response(json_body=reply, delay=delay)

    return handle
