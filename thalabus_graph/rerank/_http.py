"""What the HTTP rerankers add to the HTTP core (`thalabus_graph._http`): a client per event
loop, one semaphore per loop, and merging per-batch outcomes into one reply.

Retries, backoff, Retry-After and the mapping of statuses to errors live in the core.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import ssl
import weakref
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import httpx

from thalabus_graph._http import (
    MAX_REPLY_BYTES,
    Endpoint,
    RetryPolicy,
    as_service_error,
    bearer_headers,
    post_json_async,
)
from thalabus_graph.errors import ConfigurationError
from thalabus_graph.rerank.protocol import Passage, RerankFailure, RerankReply

logger = logging.getLogger(__name__)


class HttpPoster:
    """POSTs JSON to one URL with retries; owns or borrows an ``httpx.AsyncClient``.

    A borrowed client (``client=``) is never closed here. Without one, a client is opened per
    ``session()`` so that the poster works from any event loop (the sync wrappers start one
    loop per call).
    """

    def __init__(
        self,
        url: str,
        *,
        api_key: str = "",
        timeout_seconds: float = 30.0,
        retry: RetryPolicy | None = None,
        client: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        max_connections: int = 10,
        max_reply_bytes: int = MAX_REPLY_BYTES,
    ) -> None:
        if not url:
            raise ConfigurationError("an HTTP reranker needs a URL")
        if timeout_seconds <= 0:
            raise ConfigurationError("timeout_seconds must be positive")
        if max_reply_bytes < 1:
            raise ConfigurationError("max_reply_bytes must be at least 1")
        if client is not None and transport is not None:
            raise ConfigurationError("pass either client or transport, not both")
        self.endpoint = Endpoint(url, "", bearer_headers(api_key), timeout_seconds,
                                 retry or RetryPolicy(), max_reply_bytes)
        self.timeout_seconds = timeout_seconds
        self._client = client
        self._transport = transport
        self._max_connections = max(1, max_connections)

    @asynccontextmanager
    async def session(self) -> AsyncIterator[httpx.AsyncClient]:
        """The borrowed client, or a fresh one closed on exit."""
        if self._client is not None:
            yield self._client
            return
        limits = httpx.Limits(
            max_connections=self._max_connections,
            max_keepalive_connections=self._max_connections,
        )
        async with httpx.AsyncClient(
            transport=self._transport,
            limits=limits,
            timeout=self.timeout_seconds,
            verify=_ssl_context(),
        ) as client:
            yield client

    async def post_json(self, client: httpx.AsyncClient, body: Any) -> Any:
        """POST ``body``; return the decoded JSON reply or raise a `ServiceError`."""
        return await post_json_async(client, self.endpoint, body)


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One default TLS context for every owned client (building one costs ~50 ms)."""
    return httpx.create_ssl_context()


class LoopSemaphores:
    """One ``asyncio.Semaphore`` per running event loop, all with the same bound."""

    def __init__(self, bound: int) -> None:
        if bound < 1:
            raise ConfigurationError("max_parallelism must be at least 1")
        self.bound = bound
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]
        self._by_loop = weakref.WeakKeyDictionary()

    def get(self) -> asyncio.Semaphore:
        """The semaphore of the running loop."""
        loop = asyncio.get_running_loop()
        sem = self._by_loop.get(loop)
        if sem is None:
            sem = asyncio.Semaphore(self.bound)
            self._by_loop[loop] = sem
        return sem


BatchOutcome = tuple[dict[str, float], dict[str, int]] | BaseException


def merge_batches(batches: Sequence[Sequence[Passage]], outcomes: Sequence[BatchOutcome],
                  usage: Mapping[str, int] | None = None) -> RerankReply:
    """One reply from per-batch outcomes: scores and usage summed, a failed batch recorded
    against its passage ids; cancellation and other non-``Exception`` errors propagate."""
    scores: dict[str, float] = {}
    total: dict[str, int] = dict(usage or {})
    failures: list[RerankFailure] = []
    for batch, outcome in zip(batches, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            if not isinstance(outcome, Exception):
                raise outcome
            ids = tuple(p.fragmentid for p in batch)
            failures.append(RerankFailure(ids, as_service_error(outcome)))
            logger.warning("a scoring batch of %d passages failed: %s", len(batch), outcome)
            continue
        batch_scores, batch_usage = outcome
        scores.update(batch_scores)
        for key, value in batch_usage.items():
            total[key] = total.get(key, 0) + value
    return RerankReply(scores=scores, failures=tuple(failures), usage=total)


class HttpReranker:
    """What the HTTP rerankers share: the poster, the per-loop bound on requests in flight,
    ``available``, and `score` splitting passages into batches that run concurrently.

    A subclass builds the request of one batch and reads its reply in `_score_batch`.
    """

    def __init__(
        self,
        endpoint: str,
        *,
        model: str,
        api_key: str,
        max_chars: int,
        batch_size: int | None,
        max_parallelism: int,
        timeout_seconds: float,
        retry: RetryPolicy,
        client: httpx.AsyncClient | None,
        transport: httpx.AsyncBaseTransport | None,
        available: bool,
        max_reply_bytes: int = MAX_REPLY_BYTES,
    ) -> None:
        self.endpoint = endpoint
        self.model = model
        self.max_chars = max_chars
        self.batch_size = batch_size
        self._available = available
        self._poster = HttpPoster(endpoint, api_key=api_key, timeout_seconds=timeout_seconds,
                                  retry=retry, client=client, transport=transport,
                                  max_connections=max_parallelism,
                                  max_reply_bytes=max_reply_bytes)
        self._semaphores = LoopSemaphores(max_parallelism)

    @property
    def available(self) -> bool:
        """Whether this backend is declared usable (``available=`` at construction)."""
        return self._available

    @property
    def max_parallelism(self) -> int:
        """The bound on requests in flight per event loop."""
        return self._semaphores.bound

    def _usage_base(self, batches: int) -> dict[str, int]:
        """Usage counted for the whole call before any batch reports its own."""
        return {}

    async def _score_batch(self, client: httpx.AsyncClient, query: str,
                           batch: list[Passage]) -> tuple[dict[str, float], dict[str, int]]:
        """Scores by fragment id and usage counters of one batch; raises on failure."""
        raise NotImplementedError

    async def score(self, query: str, passages: Sequence[Passage]) -> RerankReply:
        """Score ``passages``, ``batch_size`` per request (all in one when None); failed
        batches are reported, not raised."""
        if not passages:
            return RerankReply()
        size = self.batch_size or len(passages)
        batches = [list(passages[i : i + size]) for i in range(0, len(passages), size)]
        semaphore = self._semaphores.get()
        async with self._poster.session() as client:

            async def run(batch: list[Passage]) -> BatchOutcome:
                async with semaphore:
                    return await self._score_batch(client, query, batch)

            outcomes = await asyncio.gather(*(run(b) for b in batches), return_exceptions=True)
        return merge_batches(batches, outcomes, self._usage_base(len(batches)))
