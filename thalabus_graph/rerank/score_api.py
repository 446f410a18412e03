"""`ScoreApiReranker`: scores passages through a scoring server over HTTP (httpx).

Speaks vLLM ``/score`` and ``/rerank`` and the TEI, Cohere and Jina ``/rerank`` formats; batches
passages per request, bounds parallel requests, maps results by ``index`` and reports bad
batches instead of guessing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, get_args

import httpx

from thalabus_graph._http import MAX_REPLY_BYTES, RetryPolicy
from thalabus_graph.errors import ConfigurationError, ServiceReplyError
from thalabus_graph.rerank._http import HttpReranker
from thalabus_graph.rerank.protocol import Passage, clip, is_score

ScoreProtocol = Literal["vllm-score", "vllm-rerank", "tei", "cohere", "jina"]
"""A wire format `ScoreApiReranker` speaks."""
PROTOCOLS: Final[tuple[ScoreProtocol, ...]] = get_args(ScoreProtocol)
"""The wire formats `ScoreApiReranker` speaks."""

_DEFAULT_PATHS: Final[dict[ScoreProtocol, str]] = {
    "vllm-score": "/score",
    "vllm-rerank": "/rerank",
    "tei": "/rerank",
    "cohere": "/v2/rerank",
    "jina": "/v1/rerank",
}


def endpoint_url(base_url: str, protocol: str) -> str:
    """The endpoint of ``protocol`` under ``base_url``; a URL already naming it is kept.

    Example:
        >>> endpoint_url("http://gpu:8000/v1", "vllm-score")
        'http://gpu:8000/v1/score'
        >>> endpoint_url("https://api.jina.ai", "jina")
        'https://api.jina.ai/v1/rerank'
    """
    if protocol not in _DEFAULT_PATHS:
        raise ConfigurationError(
            f"reranker protocol must be one of {', '.join(PROTOCOLS)}, not {protocol!r}"
        )
    if not base_url:
        raise ConfigurationError("a score API reranker needs a URL")
    url = httpx.URL(base_url)
    path = url.path.rstrip("/")
    if path.endswith(("/score", "/rerank")):
        return str(url)
    tail = _DEFAULT_PATHS[protocol]
    for version in ("/v1", "/v2"):
        if path.endswith(version) and tail.startswith(version + "/"):
            tail = tail[len(version) :]
    return str(url.copy_with(path=path + tail))


class ScoreApiReranker(HttpReranker):
    """A reranker over a scoring HTTP server (vLLM, TEI, Cohere, Jina).

    Passages are cut at ``max_chars``, sent ``batch_size`` per request (``batch_size=1`` is one
    call per passage), at most ``max_parallelism`` requests at a time. 429 (honouring
    Retry-After), 5xx and timeouts are retried ``max_retries`` times with exponential backoff.
    A batch whose reply has the wrong count, an unknown or repeated index, a non-numeric score,
    is not JSON or is larger than ``max_reply_bytes`` gives no scores and is reported in
    ``RerankReply.failures``; so is one whose whole reply did not arrive within
    ``timeout_seconds`` (a deadline per request, not per network read).

    Example:
        >>> reranker = ScoreApiReranker("http://127.0.0.1:8000", protocol="vllm-score",
        ...                             model="BAAI/bge-reranker-v2-m3", batch_size=16)
        >>> reranker.endpoint
        'http://127.0.0.1:8000/score'

        ``reply = await reranker.score("refund", [Passage("d-1-c1", "text", 0.7)])``
    """

    def __init__(
        self,
        url: str,
        *,
        protocol: ScoreProtocol = "vllm-score",
        model: str = "",
        api_key: str = "",
        batch_size: int = 32,
        max_parallelism: int = 10,
        max_chars: int = 24000,
        timeout_seconds: float = 30.0,
        max_retries: int = 3,
        backoff_seconds: float = 0.25,
        max_backoff_seconds: float = 30.0,
        client: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        available: bool = True,
        max_reply_bytes: int = MAX_REPLY_BYTES,
    ) -> None:
        if batch_size < 1:
            raise ConfigurationError("batch_size must be at least 1")
        if max_retries < 0:
            raise ConfigurationError("max_retries must not be negative")
        endpoint = endpoint_url(url, protocol)
        if protocol in ("cohere", "jina") and not model:
            raise ConfigurationError(f"the {protocol} rerank API needs a model name")
        super().__init__(endpoint, model=model, api_key=api_key, max_chars=max_chars,
                         batch_size=batch_size, max_parallelism=max_parallelism,
                         timeout_seconds=timeout_seconds,
                         retry=RetryPolicy(max_retries, backoff_seconds, max_backoff_seconds),
                         client=client, transport=transport, available=available,
                         max_reply_bytes=max_reply_bytes)
        self.protocol = protocol

    async def _score_batch(
        self, client: httpx.AsyncClient, query: str, batch: list[Passage]
    ) -> tuple[dict[str, float], dict[str, int]]:
        texts = [clip(p.text, self.max_chars) for p in batch]
        body = self.request_body(query, texts)
        reply = await self._poster.post_json(client, body)
        by_index = self.parse_reply(reply, len(batch))
        usage = {"requests": 1, **_usage_of(reply)}
        return {batch[i].fragmentid: s for i, s in by_index.items()}, usage

    def request_body(self, query: str, texts: list[str]) -> dict[str, Any]:
        """The JSON body of one request in this reranker's wire format."""
        body: dict[str, Any]
        if self.protocol == "vllm-score":
            body = {"text_1": query, "text_2": texts[0] if len(texts) == 1 else texts}
        elif self.protocol == "tei":
            body = {"query": query, "texts": texts, "truncate": True, "raw_scores": False,
                    "return_text": False}
        elif self.protocol == "vllm-rerank":
            body = {"query": query, "documents": texts}
        elif self.protocol == "cohere":
            body = {"query": query, "documents": texts, "top_n": len(texts)}
        else:  # jina
            body = {"query": query, "documents": texts, "top_n": len(texts),
                    "return_documents": False}
        if self.model and self.protocol != "tei":
            body["model"] = self.model
        return body

    def parse_reply(self, reply: Any, count: int) -> dict[int, float]:
        """Index -> score from one decoded reply of ``count`` passages.

        Raises:
            ServiceReplyError: wrong shape, wrong count, unknown / repeated index, bad score.
        """
        if self.protocol == "vllm-score":
            items, key = _list_under(reply, "data"), "score"
        elif self.protocol == "tei":
            if not isinstance(reply, list):
                raise ServiceReplyError(f"{self.endpoint}: TEI reply is not a JSON array")
            items, key = reply, "score"
        else:
            items, key = _list_under(reply, "results"), "relevance_score"
        if len(items) != count:
            raise ServiceReplyError(
                f"{self.endpoint}: {len(items)} scores for {count} passages"
            )
        out: dict[int, float] = {}
        for item in items:
            if not isinstance(item, Mapping):
                raise ServiceReplyError(f"{self.endpoint}: result is not an object: {item!r}")
            index, value = item.get("index"), item.get(key)
            if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < count:
                raise ServiceReplyError(f"{self.endpoint}: unknown index {index!r}")
            if index in out:
                raise ServiceReplyError(f"{self.endpoint}: index {index} given twice")
            if not is_score(value):
                raise ServiceReplyError(f"{self.endpoint}: bad {key} {value!r}")
            out[index] = float(value)  # type: ignore[arg-type]
        return out


def _list_under(reply: Any, key: str) -> list[Any]:
    if not isinstance(reply, Mapping) or not isinstance(reply.get(key), list):
        raise ServiceReplyError(f"reply has no {key!r} list")
    items: list[Any] = reply[key]
    return items


def _usage_of(reply: Any) -> dict[str, int]:
    """Token counters from a reply's ``usage`` (vLLM, Jina) or ``meta.billed_units`` (Cohere)."""
    if not isinstance(reply, Mapping):
        return {}
    found: dict[str, int] = {}
    usage = reply.get("usage")
    if isinstance(usage, Mapping):
        for name in ("prompt_tokens", "total_tokens"):
            value = usage.get(name)
            if isinstance(value, int) and not isinstance(value, bool):
                found[name] = value
    meta = reply.get("meta")
    billed = meta.get("billed_units") if isinstance(meta, Mapping) else None
    if isinstance(billed, Mapping):
        units = billed.get("search_units")
        if isinstance(units, int) and not isinstance(units, bool):
            found["search_units"] = units
    return found


__all__ = ["PROTOCOLS", "ScoreApiReranker", "ScoreProtocol", "endpoint_url"]
