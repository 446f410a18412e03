"""What makes a vector storable: the rule every supplied or computed embedding must pass.

Neo4j's vector indexes and ``vector.similarity.cosine`` work on float32 vectors and refuse a
vector whose float32 form has a non-finite value, a zero norm, or a squared norm that overflows
float32 ("Argument a is not a valid vector"); the index silently leaves such a node out. So a
vector is checked before it is written, after conversion to float32:

- its dimension is the graph's (``Settings.embedding_dimensions``);
- every value is finite, also as a float32 (``1e300`` overflows to infinity);
- its euclidean norm lies in [``MIN_NORM``, ``MAX_NORM``]: ``MIN_NORM`` = 1e-6 keeps well
  away from a zero vector (``[1e-200] * 384`` is all zeros in float32), ``MAX_NORM`` = 1e18
  keeps the squared norm (1e36) inside float32's range (about 3.4e38).

A vector failing the rule is a line error at ingest. Queries never fail on an old stored one:
the exact-cosine statement skips a vector outside the same bounds (``cypher/_valid_vector``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

MIN_NORM = 1e-6
"""Smallest euclidean norm of a stored vector (after float32 conversion)."""
MAX_NORM = 1e18
"""Largest euclidean norm of a stored vector: its square must stay a finite float32."""


def vector_problem(values: Sequence[float] | np.ndarray, dimensions: int | None = None
                   ) -> str | None:
    """Why ``values`` cannot be stored as an embedding, or None when it can.

    Example:
        >>> vector_problem([0.0, 0.0]) is not None, vector_problem([0.6, 0.8]) is None
        (True, True)
    """
    if dimensions is not None and len(values) != dimensions:
        return f"has {len(values)} dimensions, the graph uses {dimensions}"
    with np.errstate(over="ignore", invalid="ignore"):
        as32 = np.asarray(values, dtype=np.float64).astype(np.float32)
    if as32.size == 0:
        return "is empty"
    finite = np.isfinite(as32)
    if not finite.all():
        position = int(np.argmin(finite)) + 1
        return (f"holds a value that is not a finite float32 at position {position} "
                f"(float32 ranges to about 3.4e38)")
    norm = float(np.linalg.norm(as32.astype(np.float64)))
    if norm < MIN_NORM:
        return (f"has norm {norm:.3g} after float32 conversion, below {MIN_NORM:g}: a (near) "
                "zero vector has no direction to compare")
    if norm > MAX_NORM:
        return f"has norm {norm:.3g}, above {MAX_NORM:g} (its square overflows float32)"
    return None


__all__ = ["MAX_NORM", "MIN_NORM", "vector_problem"]
