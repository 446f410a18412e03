"""HTTP plumbing shared by the HTTP rerankers: one POST with retries, mapped errors.

Maps httpx failures to the project's exception tree at this one boundary; retries 429 (honouring
Retry-After), 5xx, timeouts and transport errors with exponential backoff.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import logging
import random
import ssl
import time
import weakref
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from thalabus_graph.errors import (
    ConfigurationError,
    RateLimited,
    RetryableServiceError,
    ServiceError,
    ServiceReplyError,
    ServiceStatusError,
    ServiceTimeout,
)
from thalabus_graph.rerank.protocol import Passage, RerankFailure, RerankReply

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait between attempts.

    Example:
        >>> RetryPolicy(max_retries=2, backoff_seconds=0.1).delay(1, None)
        0.2
    """

    max_retries: int = 3
    backoff_seconds: float = 0.25
    max_backoff_seconds: float = 30.0
    jitter: bool = False

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number ``attempt + 1`` (``attempt`` counts from 0)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_backoff_seconds)
        base = min(self.backoff_seconds * (2.0**attempt), self.max_backoff_seconds)
        factor: float = random.uniform(0.5, 1.0) if self.jitter else 1.0
        return base * factor


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date); None if absent/bad."""
    if value is None:
        return None
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


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
        headers: Mapping[str, str] | None = None,
        timeout_seconds: float = 30.0,
        retry: RetryPolicy | None = None,
        client: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        max_connections: int = 10,
    ) -> None:
        if not url:
            raise ConfigurationError("an HTTP reranker needs a URL")
        if timeout_seconds <= 0:
            raise ConfigurationError("timeout_seconds must be positive")
        if client is not None and transport is not None:
            raise ConfigurationError("pass either client or transport, not both")
        self.url = url
        self.headers = dict(headers or {})
        self.timeout_seconds = timeout_seconds
        self.retry = retry or RetryPolicy()
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
        attempt = 0
        while True:
            try:
                return await self._post_once(client, body)
            except RetryableServiceError as exc:
                if attempt >= self.retry.max_retries:
                    raise
                retry_after = exc.retry_after if isinstance(exc, RateLimited) else None
                logger.info("%s: %s; retry %d of %d", self.url, exc, attempt + 1,
                            self.retry.max_retries)
                await asyncio.sleep(self.retry.delay(attempt, retry_after))
                attempt += 1

    async def _post_once(self, client: httpx.AsyncClient, body: Any) -> Any:
        try:
            response = await client.post(
                self.url, json=body, headers=self.headers, timeout=self.timeout_seconds
            )
        except httpx.TimeoutException as exc:
            raise ServiceTimeout(
                f"{self.url}: no answer within {self.timeout_seconds} s"
            ) from exc
        except httpx.TransportError as exc:
            raise RetryableServiceError(f"{self.url}: {type(exc).__name__}: {exc}") from exc
        status = response.status_code
        if status == 429:
            raise RateLimited(
                f"{self.url}: HTTP 429",
                retry_after=parse_retry_after(response.headers.get("retry-after")),
            )
        if status >= 500:
            raise RetryableServiceError(f"{self.url}: HTTP {status}: {_snippet(response.text)}")
        if status >= 400:
            raise ServiceStatusError(
                f"{self.url}: HTTP {status}: {_snippet(response.text)}", status
            )
        try:
            return json.loads(response.content)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ServiceReplyError(
                f"{self.url}: reply is not JSON: {_snippet(response.text)}"
            ) from exc


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One default TLS context for every owned client (building one costs ~50 ms)."""
    return httpx.create_ssl_context()


def _snippet(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


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


def as_service_error(exc: BaseException) -> ServiceError:
    """``exc`` if it is a `ServiceError`, else a `ServiceError` naming it."""
    if isinstance(exc, ServiceError):
        return exc
    return ServiceError(f"{type(exc).__name__}: {exc}")


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
            failures.append(RerankFailure(tuple(p.id for p in batch), as_service_error(outcome)))
            logger.warning("a scoring batch of %d passages failed: %s", len(batch), outcome)
            continue
        batch_scores, batch_usage = outcome
        scores.update(batch_scores)
        for key, value in batch_usage.items():
            total[key] = total.get(key, 0) + value
    return RerankReply(scores=scores, failures=tuple(failures), usage=total)
