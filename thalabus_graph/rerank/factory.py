"""`reranker_from_settings`: the reranker a `Settings` describes.

An empty ``reranker_url`` means `NoReranking`; ``reranker_protocol`` picks the wire format
(``chat`` selects `ModelReranker`).
"""

from __future__ import annotations

from typing import TypedDict

import httpx

from thalabus_graph.errors import ConfigurationError
from thalabus_graph.rerank.model import ModelReranker
from thalabus_graph.rerank.protocol import NoReranking, Reranker
from thalabus_graph.rerank.score_api import PROTOCOLS, ScoreApiReranker
from thalabus_graph.settings import Settings


class _HttpOptions(TypedDict):
    """What every HTTP backend takes from `Settings` (and the caller's client or transport)."""

    model: str
    api_key: str
    max_chars: int
    timeout_seconds: float
    max_retries: int
    client: httpx.AsyncClient | None
    transport: httpx.AsyncBaseTransport | None
    max_reply_bytes: int


def reranker_from_settings(
    settings: Settings,
    *,
    client: httpx.AsyncClient | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> Reranker:
    """Build the configured reranker; does no I/O.

    Example:
        >>> from thalabus_graph.settings import Settings
        >>> type(reranker_from_settings(Settings())).__name__
        'NoReranking'
        >>> r = reranker_from_settings(Settings(reranker_url="http://127.0.0.1:8000",
        ...                                     reranker_protocol="tei"))
        >>> r.endpoint
        'http://127.0.0.1:8000/rerank'

    Raises:
        ConfigurationError: an unknown protocol, or a missing model where one is needed.
    """
    url = settings.reranker_url
    protocol = settings.reranker_protocol
    if not url or protocol == "none":
        return NoReranking()
    options = _HttpOptions(
        model=settings.reranker_model,
        api_key=settings.reranker_api_key,
        max_chars=settings.max_rerank_chars,
        timeout_seconds=settings.reranker_timeout_seconds,
        max_retries=settings.reranker_max_retries,
        client=client,
        transport=transport,
        max_reply_bytes=settings.service_max_reply_bytes,
    )
    if protocol == "chat":
        return ModelReranker(url, **options)
    if protocol not in PROTOCOLS:
        raise ConfigurationError(
            f"reranker_protocol must be one of {', '.join((*PROTOCOLS, 'chat', 'none'))}, "
            f"not {protocol!r}"
        )
    return ScoreApiReranker(url, protocol=protocol, batch_size=settings.reranker_batch_size,
                            max_parallelism=settings.max_parallelism, **options)
