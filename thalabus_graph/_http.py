"""The one HTTP core: POST a JSON body, retry what is worth retrying, map failures to our errors.

Both HTTP clients of the package (the embeddings client, sync over ``httpx.Client``, and the
HTTP rerankers, async over ``httpx.AsyncClient``) send every request through `post_json` or
`post_json_async`, so retries, backoff, Retry-After and the status-to-exception mapping are
decided here once:

=========================  =========================================================
outcome                    raised (and whether it is retried)
=========================  =========================================================
connection failure         `RetryableServiceError` ("cannot reach ..."), retried
no answer in time          `ServiceTimeout`, retried
HTTP 429                   `RateLimited` with ``retry_after`` from the header, retried
HTTP 408, HTTP 5xx         `RetryableServiceError`, retried
other HTTP 4xx             `ServiceStatusError` with ``status_code``, not retried
HTTP 2xx, body not JSON    `ServiceReplyError`, not retried
any other status (1xx/3xx) `ServiceReplyError`, not retried (redirects are not followed)
=========================  =========================================================

408 (Request Timeout) is retried: the server says it gave up waiting for the request, so it
never acted on it and sending it again is safe, as for a client-side timeout.

Every request has a whole-request deadline, ``Endpoint.timeout_seconds`` from the moment it is
sent to the last byte of its reply: httpx's own timeout bounds each network wait, so a server
that drips its reply a byte at a time would never trip it. The reply is read as a stream, held
to the deadline and to ``Endpoint.max_reply_bytes`` as it arrives (a declared Content-Length
over the cap fails before any body byte is read): past the deadline a `ServiceTimeout` (retried
like any timeout), past the cap a `ServiceReplyError` (not retried). The async path is also
cancelled at the deadline itself; the sync path checks it whenever bytes arrive, so it ends at
most one network wait (``timeout_seconds``) late.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import math
import random
import re
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from thalabus_graph.errors import (
    RateLimited,
    RetryableServiceError,
    ServiceError,
    ServiceReplyError,
    ServiceStatusError,
    ServiceTimeout,
)

logger = logging.getLogger(__name__)

RETRIED_STATUSES = frozenset({408, 429})
"""Statuses below 500 that are retried (every 5xx is retried too)."""
MAX_REPLY_BYTES = 64 * 1024 * 1024
"""The default cap on one reply's body (``Settings.service_max_reply_bytes``): a batch of 64
embeddings of 4,096 dimensions as JSON floats is about 6 MB, a score reply far less."""


@dataclass(frozen=True)
class RetryPolicy:
    """How often to repeat a failed request and how long to wait in between.

    The wait before retry ``attempt + 1`` is the server's Retry-After hint (capped at
    ``max_retry_after_seconds``, default ``max_backoff_seconds``) or else
    ``backoff_seconds * 2**attempt`` capped at ``max_backoff_seconds``, times a random factor in
    [0.5, 1] when ``jitter`` is set.

    Example:
        >>> RetryPolicy(max_retries=2, backoff_seconds=0.1).delay(1, None)
        0.2
    """

    max_retries: int = 3
    backoff_seconds: float = 0.25
    max_backoff_seconds: float = 30.0
    jitter: bool = False
    max_retry_after_seconds: float | None = None

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number ``attempt + 1`` (``attempt`` counts from 0)."""
        if retry_after is not None:
            cap = self.max_retry_after_seconds
            return min(max(retry_after, 0.0), self.max_backoff_seconds if cap is None else cap)
        base = min(self.backoff_seconds * (2.0**attempt), self.max_backoff_seconds)
        factor: float = random.uniform(0.5, 1.0) if self.jitter else 1.0
        return base * factor


@dataclass(frozen=True)
class Endpoint:
    """Where and how to POST: the URL, the name used in error messages, headers, timeout, retries.

    Example:
        >>> Endpoint("http://127.0.0.1:9/score").label
        'http://127.0.0.1:9/score'
    """

    url: str
    name: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout_seconds: float = 30.0
    """The whole-request deadline: from sending the request to the reply's last byte."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    max_reply_bytes: int = MAX_REPLY_BYTES
    """The largest reply body read; a larger one is a `ServiceReplyError`."""

    @property
    def label(self) -> str:
        """How error messages name this endpoint: ``"<name> <url>"`` or the bare URL."""
        url = redact(self.url)
        return f"{self.name} {url}" if self.name else url


def bearer_headers(api_key: str | None) -> dict[str, str]:
    """The ``Authorization: Bearer`` header for an API key; no header without one.

    Example:
        >>> bearer_headers("k"), bearer_headers("")
        ({'Authorization': 'Bearer k'}, {})
    """
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date); None if absent or bad.

    Example:
        >>> parse_retry_after("2"), parse_retry_after("soon"), parse_retry_after(None)
        (2.0, None, None)
    """
    if value is None or not value.strip():
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    if math.isnan(seconds):
        return None
    return max(seconds, 0.0)


SNIPPET_CHARS = 200
"""Longest piece of a service's reply body an error message quotes."""
_CREDENTIALS = (
    # Authorization schemes followed by their token: Bearer, Basic, Token, ...
    (re.compile(r"\b([Bb]earer)(\s+)[^\s\"',;}]+"), r"\1\2***"),
    (re.compile(r"\b(Basic|Token|Digest|ApiKey)(\s+)[A-Za-z0-9._~+/=-]{8,}"), r"\1\2***"),
    # key = value, "key": "value", key: value for names of secrets
    (re.compile(r"(?i)((?:api[_-]?key|apikey|x-api-key|access[_-]?token|auth[_-]?token|token|"
                r"secret|password|passwd|pwd|authorization|credentials?)[\"']?\s*[:=]\s*"
                r"[\"']?)(?!Bearer\b|Basic\b|\*\*\*)[^\s\"',;&}]+"), r"\1***"),
    # OpenAI-style and similar prefixed keys
    (re.compile(r"\b(sk|pk|rk|hf|ghp|gho|xox[abp])([-_])[A-Za-z0-9_\-]{6,}"), r"\1\2***"),
    # user info in URLs: scheme://user:password@host
    (re.compile(r"(?<=://)[^/\s@]+@"), "***@"),
)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with everything shaped like a credential replaced by ``***``: Authorization
    tokens (Bearer, Basic...), ``api_key=...`` / ``"token": "..."`` values, ``sk-...`` keys,
    URL user info, and each of ``secrets`` verbatim (the request's own key, if echoed)."""
    for secret in secrets:
        if len(secret) >= 4:
            text = text.replace(secret, "***")
    for pattern, replacement in _CREDENTIALS:
        text = pattern.sub(replacement, text)
    return text


def snippet(text: str, limit: int = SNIPPET_CHARS, secrets: Iterable[str] = ()) -> str:
    """``text`` on one line, credentials redacted (:func:`redact`), cut to ``limit``
    characters: the only form in which a service's reply reaches an error message or a log."""
    text = redact(" ".join(text.split()), secrets)
    return text if len(text) <= limit else text[:limit] + "..."


def _secrets(endpoint: Endpoint) -> list[str]:
    """The credentials the request carried: header values and the tokens in them, and the
    URL's user info (a server may echo ``alice:pw`` without the URL around it)."""
    userinfo = httpx.URL(endpoint.url).userinfo.decode("ascii", "replace")
    found: list[str] = [userinfo, *userinfo.split(":", 1)] if userinfo else []
    for name, value in endpoint.headers.items():
        if name.lower() in ("authorization", "x-api-key", "api-key", "proxy-authorization"):
            found.append(value)
            found.extend(value.split()[1:])
    return found


def transport_failure(endpoint: Endpoint, exc: httpx.TransportError) -> RetryableServiceError:
    """The retryable error for an httpx transport failure (a timeout or no connection)."""
    if isinstance(exc, httpx.TimeoutException):
        return ServiceTimeout(
            f"{endpoint.label} did not answer within {endpoint.timeout_seconds}s")
    return RetryableServiceError(
        f"cannot reach {endpoint.label}: {type(exc).__name__}: {snippet(str(exc))}")


def decode_response(endpoint: Endpoint, response: httpx.Response) -> Any:
    """The decoded JSON of a 2xx ``response``; any other status raises per the module table.
    A quoted body is shortened and its credentials redacted (:func:`snippet`)."""
    status = response.status_code
    body = snippet(response.text, secrets=_secrets(endpoint)) if status >= 300 else ""
    if status == 429:
        raise RateLimited(
            f"{endpoint.label} is rate limiting (HTTP 429)",
            retry_after=parse_retry_after(response.headers.get("retry-after")),
        )
    if status >= 500 or status in RETRIED_STATUSES:
        raise RetryableServiceError(
            f"{endpoint.label} failed with HTTP {status}: {body}")
    if status >= 400:
        raise ServiceStatusError(
            f"{endpoint.label} refused the request with HTTP {status}: "
            f"{body}", status)
    if not 200 <= status < 300:
        raise ServiceReplyError(f"{endpoint.label} answered HTTP {status}")
    try:
        return json.loads(response.content)
    except (ValueError, UnicodeDecodeError) as exc:
        body = snippet(response.text, secrets=_secrets(endpoint))
        raise ServiceReplyError(
            f"{endpoint.label} sent a reply that is not JSON: {body}") from exc


def next_delay(endpoint: Endpoint, attempt: int, exc: RetryableServiceError) -> float:
    """The wait before retrying after ``exc``; re-raises ``exc`` when retries are used up."""
    if attempt >= endpoint.retry.max_retries:
        raise exc
    retry_after = exc.retry_after if isinstance(exc, RateLimited) else None
    logger.info("%s; retry %d of %d", exc, attempt + 1, endpoint.retry.max_retries)
    return endpoint.retry.delay(attempt, retry_after)


def post_json(
    client: httpx.Client,
    endpoint: Endpoint,
    body: Any,
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> Any:
    """POST ``body`` as JSON over a sync client; the decoded reply, or a `ServiceError`.

    Example:
        >>> ok = httpx.MockTransport(lambda request: httpx.Response(200, json={"ok": 1}))
        >>> with httpx.Client(transport=ok) as client:
        ...     post_json(client, Endpoint("http://test/x"), {"q": 1})
        {'ok': 1}
    """
    attempt = 0
    while True:
        try:
            return _post_once(client, endpoint, body)
        except RetryableServiceError as exc:
            sleep(next_delay(endpoint, attempt, exc))
            attempt += 1


async def post_json_async(
    client: httpx.AsyncClient,
    endpoint: Endpoint,
    body: Any,
    *,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> Any:
    """POST ``body`` as JSON over an async client; the decoded reply, or a `ServiceError`."""
    attempt = 0
    while True:
        try:
            return await _post_once_async(client, endpoint, body)
        except RetryableServiceError as exc:
            await sleep(next_delay(endpoint, attempt, exc))
            attempt += 1


class _Reply:
    """One reply's body as it arrives, held to the request's deadline and size cap."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.deadline = time.monotonic() + endpoint.timeout_seconds
        self.chunks: list[bytes] = []
        self.size = 0

    def late(self) -> ServiceTimeout:
        """The error of a request that outran its deadline."""
        return ServiceTimeout(f"{self.endpoint.label} did not send its whole reply within "
                              f"{self.endpoint.timeout_seconds}s")

    def too_large(self, size: int) -> ServiceReplyError:
        """The error of a reply larger than the cap."""
        return ServiceReplyError(
            f"{self.endpoint.label} sent a reply of more than {self.endpoint.max_reply_bytes} "
            f"bytes ({size} or more); raise THALABUS_SERVICE_MAX_REPLY_BYTES if it is meant "
            "to be that large, else send smaller batches")

    def head(self, response: httpx.Response) -> None:
        """Check the deadline and a declared Content-Length before any body byte is read."""
        self.check_time()
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.endpoint.max_reply_bytes:
            raise self.too_large(int(declared))

    def add(self, chunk: bytes) -> None:
        """Hold ``chunk``; raise past the cap or the deadline."""
        self.size += len(chunk)
        if self.size > self.endpoint.max_reply_bytes:
            raise self.too_large(self.size)
        self.chunks.append(chunk)
        self.check_time()

    def check_time(self) -> None:
        """Raise `ServiceTimeout` when the deadline has passed."""
        if time.monotonic() > self.deadline:
            raise self.late()

    def response(self, streamed: httpx.Response) -> httpx.Response:
        """A complete response: ``streamed``'s status and headers with the body read."""
        return httpx.Response(streamed.status_code, headers=streamed.headers,
                              content=b"".join(self.chunks), request=streamed.request)


def _post_once(client: httpx.Client, endpoint: Endpoint, body: Any) -> Any:
    reply = _Reply(endpoint)
    try:
        with client.stream("POST", endpoint.url, json=body, headers=dict(endpoint.headers),
                           timeout=endpoint.timeout_seconds) as streamed:
            reply.head(streamed)
            for chunk in streamed.iter_bytes():
                reply.add(chunk)
            response = reply.response(streamed)
    except httpx.TransportError as exc:
        raise transport_failure(endpoint, exc) from exc
    return decode_response(endpoint, response)


async def _post_once_async(client: httpx.AsyncClient, endpoint: Endpoint, body: Any) -> Any:
    reply = _Reply(endpoint)
    try:
        async with asyncio.timeout(endpoint.timeout_seconds):
            async with client.stream("POST", endpoint.url, json=body,
                                     headers=dict(endpoint.headers),
                                     timeout=endpoint.timeout_seconds) as streamed:
                reply.head(streamed)
                async for chunk in streamed.aiter_bytes():
                    reply.add(chunk)
                response = reply.response(streamed)
    except TimeoutError as exc:
        raise reply.late() from exc
    except httpx.TransportError as exc:
        raise transport_failure(endpoint, exc) from exc
    return decode_response(endpoint, response)


def as_service_error(exc: BaseException) -> ServiceError:
    """``exc`` if it is a `ServiceError`, else a `ServiceError` naming it."""
    if isinstance(exc, ServiceError):
        return exc
    return ServiceError(f"{type(exc).__name__}: {exc}")


__all__ = [
    "MAX_REPLY_BYTES",
    "RETRIED_STATUSES",
    "Endpoint",
    "RetryPolicy",
    "as_service_error",
    "bearer_headers",
    "decode_response",
    "next_delay",
    "parse_retry_after",
    "post_json",
    "post_json_async",
    "snippet",
    "transport_failure",
]
