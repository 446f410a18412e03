"""Fitting a calibration on labelled queries: what ``thalabus-graph calibrate`` runs.

A search only reads a calibration (``scoring.calibration``); this module makes one. From each
labelled query's candidates (``candidates``: top cosines and which of them are relevant, as a
``Labelled`` set) it fits every source family's logistic map of the tail evidence
(``fit_map``), and from phrases with and without a relevant fragment the phrase gate
(``fit_gate``), both by weighted logistic regression at even prior odds, and how those
probabilities read at the labelled data's own prior (``fit_reading``). ``fit`` puts them
together into a ``Calibration``. numpy is needed here only, not by the search.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from thalabus_graph.errors import ConfigurationError
from thalabus_graph.scoring.calibration import (
    DEFAULT_SKIP,
    DEFAULT_SOURCE,
    Calibration,
    Gate,
    SourceMap,
    background,
    evidence,
)
from thalabus_graph.scoring.lexical import phrase_words, share_of
from thalabus_graph.scoring.reliability import balanced_weights
from thalabus_graph.scoring.tokens import lexical_words

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Labelled:
    """One labelled set's candidates of one source family: for every query, its candidates'
    cosines (best first) and whether each is relevant, and the source's size; ``shares``
    (when the texts were read) holds every query's lexical share among its candidates."""

    name: str
    cosines: Sequence[FloatArray]
    relevant: Sequence[npt.NDArray[np.bool_]]
    size: int
    shares: Sequence[float] | None = None

    @property
    def labels(self) -> npt.NDArray[np.bool_]:
        """Whether each candidate of every query is relevant, flattened in query order."""
        return (np.concatenate(list(self.relevant)).astype(bool) if self.relevant
                else np.zeros(0, dtype=bool))


def evidences(data: Labelled, skip: int = DEFAULT_SKIP) -> tuple[FloatArray,
                                                                   npt.NDArray[np.bool_]]:
    """The tail evidence of every candidate of ``data`` and its label, flattened."""
    feats: list[float] = []
    for cos in data.cosines:
        bg = background(list(cos), data.size, skip)
        feats.extend(evidence(float(c), bg) for c in cos)
    return np.asarray(feats, dtype=np.float64), data.labels


def fit_map(sets: Sequence[tuple[FloatArray, npt.NDArray[np.bool_]]],
            iterations: int = 100, odds: float = 1.0) -> SourceMap:
    """A logistic map from evidence to P(relevant) at prior ``odds`` (default even): within
    each set the relevant candidates weigh ``odds / (1 + odds)`` and the others the rest,
    and each set weighs the same (``_logistic``)."""
    used = [(f, y) for f, y in sets if y.any() and (~y).any()]
    if not used:
        raise ConfigurationError("calibration needs relevant and non-relevant candidates")
    x = np.concatenate([f for f, _ in used])
    labels = [y for _, y in used]
    design = np.vstack([np.ones_like(x), x]).T
    theta = _logistic(design, np.concatenate(labels).astype(np.float64),
                      balanced_weights(labels, odds), iterations)
    intercept, slope = float(theta[0]), float(theta[1])
    if not slope > 0:
        raise ConfigurationError("the labelled data gives no increasing map (relevant "
                                 "candidates do not stand out from the others)")
    return SourceMap(intercept, slope)


def fit_reading(sets: Sequence[tuple[FloatArray, npt.NDArray[np.bool_]]],
                mapped: SourceMap, odds: float) -> SourceMap:
    """How ``mapped``'s probabilities at even odds read at prior ``odds``: the map fitted at
    those odds (``fit_map``), written as a logistic of the even-odds logit (both are linear in
    the evidence), so that ``calibration.at_prior`` of ``mapped`` is that fit."""
    at_odds = fit_map(sets, odds=odds)
    slope = at_odds.slope / mapped.slope
    return SourceMap(at_odds.intercept - slope * mapped.intercept, slope)


def prior_odds_of(sets: Sequence[Labelled]) -> float:
    """The odds that one of a phrase's candidates is relevant: each set's relevant against
    non-relevant candidates, the geometric mean over the sets (each set weighs the same, as
    in ``fit_map``); a set without both classes is left out, none left reads even odds."""
    logs = []
    for data in sets:
        labels = data.labels
        n_rel, n_non = int(labels.sum()), int((~labels).sum())
        if n_rel and n_non:
            logs.append(float(np.log(n_rel / n_non)))
    return min(float(np.exp(np.mean(logs))), 1.0) if logs else 1.0


def _logistic(design: FloatArray, y: FloatArray, w: FloatArray, iterations: int) -> FloatArray:
    """Weighted logistic regression by Newton's method (a tiny ridge keeps it defined when
    the classes separate)."""
    theta = np.zeros(design.shape[1])
    ridge = 1e-6 * np.eye(design.shape[1])
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ theta, -500, 500)))
        grad = design.T @ (w * (p - y)) + 1e-6 * theta
        hess = (design * (w * p * (1 - p))[:, None]).T @ design + ridge
        step = np.linalg.solve(hess, grad)
        theta -= step
        if float(np.abs(step).max()) < 1e-10:
            break
    return theta


def best_hits(data: Labelled) -> FloatArray:
    """Every query's best candidate cosine in ``data`` (queries without a candidate left
    out): the gate's first feature."""
    return np.asarray([float(np.max(cos)) for cos in data.cosines if len(cos)],
                      dtype=np.float64)


def gate_features(data: Labelled) -> FloatArray:
    """What the gate reads of every query of ``data`` with a candidate: its best cosine, and
    (one row per query, two columns) its lexical share when ``data.shares`` is known."""
    if data.shares is None:
        return best_hits(data)
    rows = [(float(np.max(cos)), float(share))
            for cos, share in zip(data.cosines, data.shares, strict=True) if len(cos)]
    return np.asarray(rows, dtype=np.float64).reshape(len(rows), 2)


def fit_gate(present: Sequence[FloatArray], absent: Sequence[FloatArray],
             iterations: int = 100) -> Gate:
    """The phrase gate from what it reads (``gate_features``: best cosines, or rows of best
    cosine and lexical share, the same for every set) of phrases with a relevant fragment
    (``present``) and of phrases about topics the corpus lacks (``absent``): both classes
    weigh the same, and so does every set within its class. The features are standardised
    for the fit (Newton's steps stay well scaled) and the gate is given on the raw ones."""
    xs: list[FloatArray] = []
    ys: list[FloatArray] = []
    ws: list[FloatArray] = []
    for label, sets in ((1.0, [a for a in present if len(a)]),
                        (0.0, [a for a in absent if len(a)])):
        if not sets:
            raise ConfigurationError("the gate needs phrases with and without a relevant "
                                     "fragment")
        for rows in sets:
            xs.append(np.asarray(rows, dtype=np.float64).reshape(len(rows), -1))
            ys.append(np.full(len(rows), label))
            ws.append(np.full(len(rows), 0.5 / len(sets) / len(rows)))
    if len({x.shape[1] for x in xs}) != 1 or xs[0].shape[1] > 2:
        raise ConfigurationError("every gate set needs the same features (best cosine, "
                                 "optionally the lexical share)")
    x = np.vstack(xs)
    mean = x.mean(axis=0)
    scale = np.where(x.std(axis=0) > 0, x.std(axis=0), 1.0)
    design = np.column_stack([np.ones(len(x)), (x - mean) / scale])
    theta = _logistic(design, np.concatenate(ys), np.concatenate(ws), iterations)
    weights = theta[1:] / scale
    intercept = float(theta[0] - weights @ mean)
    if not all(w > 0 for w in weights):
        raise ConfigurationError("the gate data gives no increasing gate (absent topics' best "
                                 "hits are as similar as relevant ones)")
    return Gate(intercept, float(weights[0]),
                float(weights[1]) if len(weights) > 1 else None)


def fit(model: str, data: Mapping[str, Sequence[Labelled]], *, skip: int = DEFAULT_SKIP,
        measured: Mapping[str, Any] | None = None, gate: Gate | None = None,
        foreign_gate: Gate | None = None) -> Calibration:
    """Fit a calibration: ``data`` maps a source family (or ``default``) to its labelled
    sets; ``gate`` and ``foreign_gate`` are the phrase gates to keep (``fit_gate``); the
    reading at the prior is the ``default`` family's (else the first's), at its labelled
    sets' own prior odds (``fit_reading``, ``prior_odds_of``)."""
    features = {family: [evidences(d, skip) for d in sets] for family, sets in data.items()}
    sources = {family: fit_map(feats) for family, feats in features.items()}
    family = DEFAULT_SOURCE if DEFAULT_SOURCE in data else next(iter(data))
    reading = fit_reading(features[family], sources[family], prior_odds_of(data[family]))
    names = tuple(sorted({d.name for sets in data.values() for d in sets}))
    return Calibration(model, sources, skip, names, dict(measured or {}), gate, foreign_gate,
                       reading)


def candidates(name: str, queries: FloatArray, corpus: FloatArray,
               relevant: Sequence[set[int]], top_n: int, *,
               phrases: Sequence[str] | None = None,
               texts: Sequence[str] | None = None) -> Labelled:
    """Each query's ``top_n`` candidates by cosine (rows L2-normalised) and their labels, as
    a ``Labelled`` set: what one source's unrestricted search returns for the query.
    ``relevant[i]`` holds the corpus rows relevant to query row ``i``. With the queries'
    ``phrases`` and the corpus rows' ``texts``, each query's lexical share among its
    candidates (``share_of`` of ``phrase_words``, as ``lexical_share`` reads it) is kept
    too."""
    cosines: list[FloatArray] = []
    labels: list[npt.NDArray[np.bool_]] = []
    shares: list[float] | None = [] if phrases is not None and texts is not None else None
    found: dict[int, frozenset[str]] = {}
    k = min(top_n, corpus.shape[0])
    for start in range(0, queries.shape[0], 256):
        sims = queries[start:start + 256] @ corpus.T
        for offset, row in enumerate(sims):
            top = np.argpartition(-row, k - 1)[:k] if k < row.shape[0] else np.arange(k)
            top = top[np.argsort(-row[top], kind="stable")]
            cosines.append(row[top].astype(np.float64))
            wanted = relevant[start + offset]
            labels.append(np.fromiter((int(j) in wanted for j in top), dtype=bool, count=k))
            if shares is not None and phrases is not None and texts is not None:
                for j in top:
                    if int(j) not in found:
                        found[int(j)] = lexical_words(texts[int(j)], 1)
                shares.append(share_of(phrase_words(phrases[start + offset]),
                                       (found[int(j)] for j in top)))
    return Labelled(name, cosines, labels, int(corpus.shape[0]), shares)
