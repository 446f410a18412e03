"""The Embedder protocol every embedding backend follows, plus shared helpers.

Vectors are float32 arrays of shape ``(n, dimensions)`` with L2-normalised rows; queries and
passages are embedded separately because asymmetric models (e5) prefix them differently.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Protocol, TypeAlias, runtime_checkable

import numpy as np
import numpy.typing as npt

from thalabus_graph.errors import ServiceReplyError

Vectors: TypeAlias = npt.NDArray[np.float32]
"""A float32 array of shape (n, dimensions), one L2-normalised row per text."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit vectors.

    Example:
        >>> emb: Embedder = E5LocalEmbedder()              # doctest: +SKIP
        >>> emb.embed_queries(["kitchen floor"]).shape     # doctest: +SKIP
        (1, 384)
    """

    @property
    def dimensions(self) -> int:
        """Length of every vector."""
        ...

    @property
    def model_id(self) -> str:
        """Names the model (and its variant); part of every stored text hash."""
        ...

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Embed search queries: float32, shape (len(texts), dimensions), unit rows."""
        ...

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        """Embed passages (documents): float32, shape (len(texts), dimensions), unit rows."""
        ...


def text_hash(model_id: str, text: str) -> str:
    """sha256 hex digest of ``model_id + NUL + text``: stored on fragments so that a fragment
    whose text and model are unchanged is not embedded again."""
    return hashlib.sha256(f"{model_id}\x00{text}".encode()).hexdigest()


def normalize_rows(vectors: npt.ArrayLike) -> Vectors:
    """Return float32 rows scaled to unit length; a zero or non-finite row is an error."""
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim != 2:
        raise ServiceReplyError(f"expected a 2-d array of vectors, got shape {array.shape}")
    if array.size and not np.isfinite(array).all():
        raise ServiceReplyError("embedding holds a non-finite value")
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    if array.shape[0] and (norms == 0).any():
        raise ServiceReplyError("embedding is a zero vector; it cannot be normalised")
    out: Vectors = (array / norms).astype(np.float32, copy=False)
    return out


def empty_vectors(dimensions: int) -> Vectors:
    """A (0, dimensions) float32 array, the answer for no texts."""
    return np.zeros((0, dimensions), dtype=np.float32)
