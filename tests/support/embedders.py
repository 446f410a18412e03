"""Embedders without a model, for tests and benchmarks that must not spend the shared CPU on one.

Each text's vector comes from a random generator seeded by the text's sha256, so a text always
gets the same vector. Subclasses choose how a vector is drawn from that generator; the vectors
carry no meaning.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import ClassVar, Literal

import numpy as np
import numpy.typing as npt

from thalabus_graph.embeddings.base import Vectors


def text_seed(text: str, byteorder: Literal["big", "little"]) -> int:
    """A 64-bit seed from the first 8 bytes of the text's UTF-8 sha256."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], byteorder)


class SeededEmbedder:
    """The `Embedder` protocol around `vector`: one unit vector per text, queries and passages
    alike (a subclass may refuse passages)."""

    name: ClassVar[str] = "seeded"
    """The ``model_id`` (it names the stub in text hashes)."""

    def __init__(self, dimensions: int) -> None:
        self._dimensions = dimensions

    @property
    def dimensions(self) -> int:
        """Vector length."""
        return self._dimensions

    @property
    def model_id(self) -> str:
        """Names the stub."""
        return self.name

    def vector(self, text: str) -> npt.NDArray[np.float32]:
        """The text's unit vector."""
        raise NotImplementedError

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """One vector per text."""
        return self._stack(texts)

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        """One vector per text."""
        return self._stack(texts)

    def _stack(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self._dimensions), np.float32)
        return np.stack([self.vector(t) for t in texts]).astype(np.float32)



class FixedEmbedder(SeededEmbedder):
    """Query vectors given by the test (the corpus is ingested with supplied vectors)."""

    name = "fixed"

    def __init__(self, queries: dict[str, npt.NDArray[np.float32]], dimensions: int = 384
                 ) -> None:
        super().__init__(dimensions)
        self.queries = queries

    def vector(self, text: str) -> npt.NDArray[np.float32]:
        """The vector the test gave for this query."""
        return self.queries[text]

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        raise AssertionError("passages are ingested with their vectors")


__all__ = ["FixedEmbedder", "SeededEmbedder", "text_seed"]
