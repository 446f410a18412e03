"""How well calibrated scores read as probabilities: the reliability diagram and the expected
calibration error (ECE), pure computation on scores, labels and weights.

Scores in [0, 1] are put into ``bins`` equal-width bins (a score of exactly 1.0 in the last).
A bin's ``score`` is the weighted mean score in it, its ``frequency`` the weighted share of
relevant items in it and its ``weight`` its share of the total weight. The ECE is the
weight-weighted mean gap, ``sum(weight x |score - frequency|)``: 0 for scores that are the
frequencies they claim, at most 1.

``thalabus_graph.scoring.fitting`` fits a calibration's maps at even prior odds (relevant and
non-relevant candidates weigh the same within each labelled set, and every set the same) and
a score reads them at the calibration's prior odds, so its scores are read against weights
that give every set those odds (``balanced_weights`` with ``odds``); with equal weights the ECE
reads the scores against each labelled set's own share of relevant items.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from thalabus_graph.errors import ConfigurationError

DEFAULT_BINS = 10
"""Equal-width bins of a reliability diagram."""


@dataclass(frozen=True)
class Bin:
    """One bin of a reliability diagram: scores in ``[low, high)`` (the last bin holds
    ``high``), their ``count``, their share of the total ``weight``, their weighted mean
    ``score`` and the weighted ``frequency`` of relevant items among them (both None for
    an empty bin)."""

    low: float
    high: float
    count: int
    weight: float
    score: float | None
    frequency: float | None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {"low": self.low, "high": self.high, "count": self.count,
                "weight": self.weight, "score": self.score, "frequency": self.frequency}


@dataclass(frozen=True)
class Reliability:
    """A reliability diagram's bins and the expected calibration error they give."""

    bins: tuple[Bin, ...]
    ece: float
    count: int

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {"ece": self.ece, "count": self.count, "bins": [b.to_dict() for b in self.bins]}


def reliability(scores: npt.ArrayLike, labels: npt.ArrayLike,
                weights: npt.ArrayLike | None = None, bins: int = DEFAULT_BINS) -> Reliability:
    """The reliability diagram and ECE of ``scores`` (each in [0, 1]) against ``labels``
    (relevant or not), each item weighing ``weights`` (default: the same); a score outside
    [0, 1], a non-finite or negative weight, mismatched lengths or no weight at all is a
    ``ConfigurationError``.

    Example:
        >>> round(reliability([0.2, 0.2, 0.8, 0.8], [False, True, True, True]).ece, 3)
        0.25
    """
    s = np.asarray(scores, dtype=np.float64).ravel()
    y = np.asarray(labels, dtype=bool).ravel()
    w = (np.ones_like(s) if weights is None
         else np.asarray(weights, dtype=np.float64).ravel())
    if not s.shape == y.shape == w.shape:
        raise ConfigurationError(f"{s.size} scores, {y.size} labels and {w.size} weights: "
                                 "one of each per item")
    if bins < 1:
        raise ConfigurationError(f"a reliability diagram needs at least one bin (got {bins})")
    if not (np.isfinite(s).all() and ((s >= 0) & (s <= 1)).all()):
        raise ConfigurationError("scores must be probabilities in [0, 1]")
    if not (np.isfinite(w).all() and (w >= 0).all()) or not w.sum() > 0:
        raise ConfigurationError("weights must be finite, non-negative and not all zero")
    total = float(w.sum())
    index = np.minimum((s * bins).astype(np.int64), bins - 1)
    out: list[Bin] = []
    ece = 0.0
    for b in range(bins):
        inside = index == b
        mass = float(w[inside].sum())
        score = frequency = None
        if mass > 0:
            score = float((w[inside] * s[inside]).sum() / mass)
            frequency = float(w[inside & y].sum() / mass)
            ece += mass / total * abs(score - frequency)
        out.append(Bin(b / bins, (b + 1) / bins, int(inside.sum()), mass / total, score,
                       frequency))
    return Reliability(tuple(out), min(max(ece, 0.0), 1.0), int(s.size))


def balanced_weights(label_sets: Sequence[npt.ArrayLike],
                     odds: float = 1.0) -> npt.NDArray[np.float64]:
    """Item weights at prior ``odds`` of relevance (default even), concatenated over
    ``label_sets``: within each set the relevant items weigh ``odds / (1 + odds)`` and the
    non-relevant ``1 / (1 + odds)`` of the set's weight, and every set weighs the same (a set
    without both classes gives its one class the set's whole weight)."""
    out: list[npt.NDArray[np.float64]] = []
    sets = [np.asarray(labels, dtype=bool).ravel() for labels in label_sets]
    used = [y for y in sets if y.size]
    for y in sets:
        w = np.zeros(y.size, dtype=np.float64)
        if y.size:
            shares = [(c, share) for c, share in ((y, odds / (1.0 + odds)),
                                                  (~y, 1.0 / (1.0 + odds))) if c.any()]
            total = sum(share for _, share in shares)
            for c, share in shares:
                w[c] = share / total / int(c.sum()) / len(used)
        out.append(w)
    return np.concatenate(out) if out else np.zeros(0, dtype=np.float64)

