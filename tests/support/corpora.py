"""Small corpora ingested with supplied vectors, for tests that must not run a model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def with_vectors(prefix: str, n: int, kinds: Sequence[str], *, seed: int,
                 dimensions: int = 384) -> list[dict[str, Any]]:
    """``n`` one-chapter documents ``{prefix}-{i}`` in ontology ``prefix``, each with a random
    unit vector for its chapter and the paragraph ingest splits from it, and ``KIND`` taken in
    turn from ``kinds``."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        vector = rng.normal(size=dimensions)
        unit = (vector / np.linalg.norm(vector)).tolist()
        out.append({"documentid": f"{prefix}-{i}", "ontology": prefix,
                    "categories": {"KIND": [kinds[i % len(kinds)]]},
                    "chapters": [f"chapter {i} about the sea, the wind and the harbour wall"],
                    "embeddings": {"chapters": [unit], "paragraphs": [unit]}})
    return out
