"""The adversarial suite: fuzzed ingest lines, concurrent writers, a killed server.

The fast part runs with ``make test``; tests marked ``@pytest.mark.stress`` (more examples,
longer concurrency, a SIGKILL of a launcher-started Neo4j) are left out unless
``THALABUS_STRESS=1`` (``make stress``) or ``-m stress`` asks for them. The ``db`` and
``clean_db`` fixtures are the integration suite's (same server, same rules).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence

import numpy as np
import pytest

from tests.integration.conftest import clean_db, db, db_settings
from thalabus_graph.embeddings.base import Vectors

__all__ = ["HashEmbedder", "clean_db", "db", "db_settings", "stress_enabled"]


def stress_enabled(config: pytest.Config | None = None) -> bool:
    """True when the slow part was asked for (``THALABUS_STRESS=1`` or ``-m stress``)."""
    if os.environ.get("THALABUS_STRESS", "").strip() in ("1", "true", "yes"):
        return True
    return config is not None and "stress" in (config.option.markexpr or "")


def pytest_configure(config: pytest.Config) -> None:
    """Declare the markers (also when run from outside the project root)."""
    config.addinivalue_line("markers", "stress: slow adversarial test (make stress)")
    config.addinivalue_line("markers", "integration: needs a real Neo4j server")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect (not skip) the stress tests unless asked: ``make test`` stays fast."""
    if stress_enabled(config):
        return
    slow = [item for item in items if item.get_closest_marker("stress") is not None]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item.get_closest_marker("stress") is None]


class HashEmbedder:
    """A deterministic embedder for load tests: a vector seeded by the text's hash.

    The vectors carry no meaning; these tests check what is stored, not what is found, and
    must not spend the shared CPU on a model.
    """

    def __init__(self, dimensions: int) -> None:
        self._dimensions = dimensions

    @property
    def dimensions(self) -> int:
        return self._dimensions

    @property
    def model_id(self) -> str:
        return "test-hash"

    def _vectors(self, texts: Sequence[str]) -> Vectors:
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")
            row = np.random.default_rng(seed).random(self._dimensions) + 0.01
            rows.append(row / np.linalg.norm(row))
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), self._dimensions)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self._vectors(texts)

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return self._vectors(texts)
