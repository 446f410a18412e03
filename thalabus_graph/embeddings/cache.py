"""An LRU cache in front of any Embedder's query embeddings.

Queries repeat (the same phrase in several clauses, replays); passages are cached by text hash
in the graph instead, so ``embed_passages`` passes straight through.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from thalabus_graph.embeddings.base import Embedder, Vectors, empty_vectors
from thalabus_graph.errors import ConfigurationError


@dataclass(frozen=True)
class CacheInfo:
    """Counters of a :class:`CachedQueryEmbedder`."""

    hits: int
    misses: int
    size: int
    maxsize: int


class CachedQueryEmbedder:
    """Wraps an embedder and remembers the last ``maxsize`` query vectors.

    Example:
        >>> cached = CachedQueryEmbedder(E5LocalEmbedder(), maxsize=1024)   # doctest: +SKIP
        >>> cached.embed_queries(["asylum"]); cached.embed_queries(["asylum"])  # doctest: +SKIP
        >>> cached.cache_info().hits                                            # doctest: +SKIP
        1
    """

    def __init__(self, inner: Embedder, maxsize: int = 1024) -> None:
        if maxsize < 1:
            raise ConfigurationError("query embedding cache size must be at least 1")
        self.inner = inner
        self.maxsize = maxsize
        self._cache: OrderedDict[str, Vectors] = OrderedDict()
        self._lock = threading.Lock()
        self._hits = 0
        self._misses = 0

    @property
    def dimensions(self) -> int:
        """The wrapped embedder's dimension."""
        return self.inner.dimensions

    @property
    def model_id(self) -> str:
        """The wrapped embedder's model id."""
        return self.inner.model_id

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Cached query vectors; only texts not in the cache reach the wrapped embedder."""
        if isinstance(texts, str):
            raise TypeError("pass a sequence of texts, not a single string")
        if not texts:
            return empty_vectors(self.dimensions)
        found: dict[str, Vectors] = {}
        with self._lock:
            for text in texts:
                row = self._cache.get(text)
                if row is not None:
                    self._cache.move_to_end(text)
                    found[text] = row
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        self._count(hits=sum(1 for t in texts if t in found), misses=len(missing))
        if missing:
            fresh = self.inner.embed_queries(missing)
            with self._lock:
                for text, row in zip(missing, fresh, strict=True):
                    row = row.copy()
                    row.flags.writeable = False
                    found[text] = row
                    self._cache[text] = row
                    self._cache.move_to_end(text)
                while len(self._cache) > self.maxsize:
                    self._cache.popitem(last=False)
        return np.stack([found[t] for t in texts]).astype(np.float32, copy=False)

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        """Passages are not cached here."""
        return self.inner.embed_passages(texts)

    def cache_info(self) -> CacheInfo:
        """Hits, misses and size so far."""
        with self._lock:
            return CacheInfo(self._hits, self._misses, len(self._cache), self.maxsize)

    def clear(self) -> None:
        """Forget every cached vector."""
        with self._lock:
            self._cache.clear()

    def _count(self, *, hits: int, misses: int) -> None:
        with self._lock:
            self._hits += hits
            self._misses += misses
