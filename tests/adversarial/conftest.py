"""The adversarial suite: fuzzed ingest lines, concurrent writers, a killed server.

The fast part runs with ``make test``; tests marked ``@pytest.mark.stress`` (more examples,
longer concurrency, a SIGKILL of a launcher-started Neo4j) are left out unless
``THALABUS_STRESS=1`` (``make stress``) or ``-m stress`` asks for them. The ``db`` and
``clean_db`` fixtures are the integration suite's (same server, same rules).
"""

from __future__ import annotations

import os

import numpy as np
import numpy.typing as npt
import pytest

from tests.integration.conftest import clean_db, db, db_settings
from tests.support.embedders import SeededEmbedder, text_seed

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


class HashEmbedder(SeededEmbedder):
    """A deterministic embedder for load tests: a vector seeded by the text's hash.

    The vectors carry no meaning; these tests check what is stored, not what is found, and
    must not spend the shared CPU on a model.
    """

    name = "test-hash"

    def vector(self, text: str) -> npt.NDArray[np.float32]:
        """Uniform draws shifted off zero, normalised."""
        row = np.random.default_rng(text_seed(text, "big")).random(self.dimensions) + 0.01
        out: npt.NDArray[np.float32] = (row / np.linalg.norm(row)).astype(np.float32)
        return out
