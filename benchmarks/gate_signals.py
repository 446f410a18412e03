"""Second signals for the phrase gate: which per-phrase feature tells "the corpus has nothing on
this phrase" from "the best match is a hard, cross-language or other-language relevant passage".

Run ``python -m benchmarks.gate_signals [--data ../shared/data] [--json OUT]
[--no-sample]``. Needs no Neo4j: candidates are each phrase's best ``TOP_N_CHAPTERS`` passages by
cosine over the precomputed multilingual-e5-small vectors, as in ``benchmarks.calibration``.

Phrase sets (fitted on: the first four; checked on: the rest):

- present: SciFact train and xquad-r dev's labelled queries (they have a relevant passage);
- absent: xquad-r's questions with every passage of their article removed, against the rest of
  the pool and against ``ABSENT_SAMPLE`` random passages of it (``absent_topics_of_xquad``);
- other-language (check): xquad-r's questions with every passage in the question's own language
  removed, so their relevant passages are in the two other languages only: what a phrase asked
  in a language the corpus lacks looks like;
- the sample corpus's held-out phrases (``benchmarks/sample_topics.py``), embedded with
  the local e5 model (``--no-sample`` skips them).

Signals (one number per phrase; higher = more likely the corpus holds something on it):

- ``best_cosine``: the shipped gate's feature, the best candidate's cosine;
- ``margin``: the best cosine minus the mean of the next ``K`` candidates';
- ``spread_z``: the best cosine in standard deviations of the phrase's candidate cosines;
- ``query_gap``: the best cosine minus the mean cosine of the phrase to its ``K`` nearest
  reference phrases (the hubness of the phrase itself, against a fixed set that could ship);
- ``csls``: cross-domain similarity local scaling, ``max_d (2 cos(q, d) - r_d) - r_q``, with
  ``r_d`` the mean cosine of fragment ``d`` to its ``K`` nearest reference phrases (computed
  at ingest) and ``r_q`` the mean cosine of the phrase to its ``K`` nearest corpus fragments;
- ``csls_ref``: the same with ``r_q`` read against the reference phrases (corpus-independent);
- ``hub_best``: minus ``r_d`` of the best candidate (a hub's nearest neighbours are everyone);
- ``other_language``: whether the best candidate is in another language than the phrase;
- lexical shares, the words being lowercase ``\\w+`` tokens (``Lexicon``, through
  ``tokens.lexical_words``): ``lexical_best``
  (IDF-weighted share of the phrase's words in its best candidate), ``lexical_any`` (the
  largest such share of any fragment), ``lexical_plain`` (the largest plain share of the
  phrase's words of ``SHARE_MIN_LETTERS`` letters or more in one fragment),
  ``lexical_plain_top`` and
  ``lexical_plain_candidates`` (the same among the best ``K`` candidates, among all of them:
  what the search can read from the texts it already has), ``lexical_idf_candidates`` (IDF
  read among the candidates);
- ``a+b``: a gate on several of these (the ``other_language`` ones fitted with the
  other-language set among the present ones).

Reference phrases are xquad-r's 900 questions (CC BY-SA, could ship with the model); a phrase or
fragment never sees the reference questions of its own article (nor of the phrase's article),
so a reference set never holds the phrase's topic. For each signal the script reports its AUC
(present against absent) and a trade-off table: the signal's logistic gate (fitted like
``fitting.fit_gate``) moved along its logit, and at each step the share of absent phrases
silenced, nDCG@10 after ``MIN_SCORE`` and the share of relevant candidates dropped, with the
shipped map of ``thalabus_graph.scoring.calibration``; ``soft`` multiplies the hits by the gate (the
shipped rule), ``hard`` keeps or empties the phrase whole. Operating points, chosen on the
training sets only: ``lossless`` (the most absent phrases silenced with neither present set's
nDCG@10 below the index scale's), ``near`` (within ``TOLERANCE``), ``matched`` (at least the
shipped gate's share of the absent pool silenced, best xquad-r nDCG@10), ``fitted`` (no
shift). docs/architecture.md, "Score calibration", reads the results.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from benchmarks.calibration import ABSENT_SAMPLE, ndcg10, read_at_prior
from benchmarks.report import write_json
from benchmarks.sample_topics import ABSENT, PRESENT
from thalabus_graph.cli.calibrate_cmd import read_qrels
from thalabus_graph.scoring.calibration import (
    DEFAULT_SOURCE,
    RAW_WEIGHT,
    Calibration,
    Gate,
    SourceMap,
    background,
    evidence,
    shipped,
)
from thalabus_graph.scoring.lexical import share_of
from thalabus_graph.scoring.tokens import lexical_words
from thalabus_graph.settings import Settings

FloatArray = npt.NDArray[np.float64]
DEFAULT_DATA = Path("../shared/data")
DEFAULT_OUT = Path(".thalabus/benchmarks/gate_signals.json")
K = 10
"""Neighbours read by the margin, CSLS and hubness signals."""
SHIFTS = np.round(np.arange(-6.0, 6.01, 0.1), 2)
"""Logit shifts of a fitted gate swept for the trade-off (negative: a more lenient gate)."""


@dataclass
class Phrase:
    """One phrase's candidates (best first) and what the signals read."""

    cos: FloatArray
    relevant: npt.NDArray[np.bool_]
    n_relevant: int
    other_language: bool
    r_d: FloatArray
    r_q_corpus: float
    r_q_ref: float
    lexical_best: float
    lexical_any: float
    lexical_plain: float
    lexical_plain_top: float
    lexical_plain_candidates: float
    lexical_idf_candidates: float


@dataclass
class PhraseSet:
    """Phrases read against one corpus of ``size`` fragments; ``present``: they have a
    relevant fragment."""

    name: str
    present: bool
    size: int
    phrases: list[Phrase]
    probs: FloatArray = field(default_factory=lambda: np.zeros((0, 0)))
    reading: SourceMap | None = None
    cos: FloatArray = field(default_factory=lambda: np.zeros((0, 0)))
    relevant: npt.NDArray[np.bool_] = field(default_factory=lambda: np.zeros((0, 0), bool))
    ideal: FloatArray = field(default_factory=lambda: np.zeros(0))


def _normalised(rows: FloatArray) -> FloatArray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _top_mean(sims: FloatArray, k: int) -> FloatArray:
    """Mean of the ``k`` largest values of each row."""
    k = min(k, sims.shape[1])
    return np.asarray(np.partition(sims, -k, axis=1)[:, -k:].mean(axis=1), dtype=np.float64)


@dataclass
class Reference:
    """The reference phrases (xquad-r's questions) and the article each is about."""

    vectors: FloatArray
    article: npt.NDArray[np.str_]

    def hubness(self, fragments: FloatArray, own: npt.NDArray[np.str_] | None,
                excluded: str | None) -> FloatArray:
        """``r_d``: each fragment's mean cosine to its ``K`` nearest reference phrases, leaving
        out those of its own article (``own``) and of the article ``excluded``."""
        sims = fragments @ self.vectors.T
        mask = np.ones_like(sims, dtype=bool)
        if own is not None:
            mask &= self.article[None, :] != own[:, None]
        if excluded is not None:
            mask &= (self.article != excluded)[None, :]
        return _top_mean(np.where(mask, sims, -np.inf), K)

    def query_mean(self, query: FloatArray, excluded: str | None) -> float:
        """``r_q`` against the reference: the phrase's mean cosine to its ``K`` nearest
        reference phrases, those of the article ``excluded`` left out."""
        sims = self.vectors @ query
        if excluded is not None:
            sims = sims[self.article != excluded]
        return float(np.sort(sims)[-K:].mean())


class Lexicon:
    """Word tokens of a corpus's texts (``tokens.lexical_words``, the engine's tokeniser), for the
    lexical signals: no stemming, no stop words; the IDF signals read every word, rare ones
    weighing by their IDF, the plain shares the words of ``SHARE_MIN_LETTERS`` letters or
    more (``lexical.share_of``, what the shipped gate reads)."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.postings: dict[str, list[int]] = defaultdict(list)
        self.long: list[frozenset[str]] = []
        for row, text in enumerate(texts):
            for word in lexical_words(text, 1):
                self.postings[word].append(row)
            self.long.append(lexical_words(text))
        self.arrays = {w: np.asarray(r) for w, r in self.postings.items()}

    def coverage(self, phrase: str, subset: npt.NDArray[np.int_], size: int,
                 top: npt.NDArray[np.int_]) -> tuple[float, ...]:
        """The IDF-weighted share of the phrase's words found in its best candidate (``top``:
        candidate rows, best first), the largest such share of any fragment of ``subset``
        (rows of the full corpus, ``size`` rows in all; IDF read in the subset, a word it lacks
        weighs the most), and the largest plain share of the phrase's words of ``SHARE_MIN_LETTERS``
        letters or more (no IDF) among: any fragment of ``subset``, the best ``K`` candidates,
        every candidate."""
        every = sorted(lexical_words(phrase, 1))
        if not every:
            return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
        inside = np.zeros(size, dtype=bool)
        inside[subset] = True
        n = int(subset.size)
        hits = np.zeros(size)
        total, in_best = 0.0, 0.0
        for word in every:
            rows = self.arrays.get(word, np.zeros(0, dtype=int))
            rows = rows[inside[rows]]
            idf = math.log(1 + (n - rows.size + 0.5) / (rows.size + 0.5))
            total += idf
            hits[rows] += idf
            in_best += idf * bool(np.isin(top[0], rows))
        long = lexical_words(phrase)
        return (in_best / total, float(hits[subset].max()) / total,
                share_of(long, (self.long[j] for j in subset)),
                share_of(long, (self.long[j] for j in top[:K])),
                share_of(long, (self.long[j] for j in top)), self._candidate_idf(every, top))

    def _candidate_idf(self, words: Sequence[str], top: npt.NDArray[np.int_]) -> float:
        """The largest IDF-weighted share of the phrase's words in one candidate, the IDF read
        among the candidates themselves (what the search can compute from the texts it has)."""
        n = int(top.size)
        hits = np.zeros(n)
        total = 0.0
        for word in words:
            found = np.isin(top, self.arrays.get(word, np.zeros(0, dtype=int)))
            idf = math.log(1 + (n - int(found.sum()) + 0.5) / (int(found.sum()) + 0.5))
            total += idf
            hits[found] += idf
        return float(hits.max()) / total if total else 0.0


@dataclass
class Corpus:
    """The fragments phrases are read against: unit vectors, languages, hubness ``r_d`` (per
    left-out article, see ``Reference.hubness``) and words."""

    vectors: FloatArray
    languages: npt.NDArray[np.str_]
    lexicon: Lexicon

    def phrase(self, query: FloatArray, text: str, language: str | None,
               subset: npt.NDArray[np.int_], relevant: set[int], top_n: int,
               r_d: FloatArray, r_q_ref: float) -> Phrase:
        """One phrase's candidates and features among the fragments ``subset`` (rows);
        ``relevant`` holds rows."""
        sims = self.vectors[subset] @ query
        k = min(top_n, sims.size)
        order = np.argsort(-sims, kind="stable")[:k]
        top = subset[order]
        rel = np.fromiter((int(j) in relevant for j in top), dtype=bool, count=k)
        other = language is not None and str(self.languages[top[0]]) != language
        lexical = self.lexicon.coverage(text, subset, len(self.vectors), top)
        return Phrase(sims[order].astype(np.float64), rel, len(relevant & set(subset.tolist())),
                      other, r_d[top], float(np.sort(sims)[-K:].mean()), r_q_ref, *lexical)


@dataclass
class Pool:
    """A labelled corpus with its precomputed vectors."""

    ids: list[str]
    corpus: Corpus
    article: npt.NDArray[np.str_]
    query_ids: list[str]
    queries: FloatArray
    query_texts: dict[str, str]
    query_languages: dict[str, str]
    judged: dict[str, set[str]]


def read_pool(folder: Path, split: str) -> Pool:
    """A BEIR-layout corpus with ``embeddings/`` (xquad-r ids ``aNNpM-ll``: article ``aNN``)."""
    ids = json.loads((folder / "embeddings" / "corpus.ids.json").read_text())
    docs = {str(d["_id"]): d for d in map(json.loads, (folder / "corpus.jsonl").open())}
    queries = {str(q["_id"]): q for q in map(json.loads, (folder / "queries.jsonl").open())}
    query_ids = json.loads((folder / "embeddings" / "queries.ids.json").read_text())
    texts = [f"{docs[i].get('title', '')} {docs[i].get('text', '')}" for i in ids]
    corpus = Corpus(_normalised(np.load(folder / "embeddings" / "corpus.npy").astype(float)),
                    np.array([str(docs[i].get("language") or "en") for i in ids]),
                    Lexicon(texts))
    return Pool(ids, corpus, np.array([i.split("p", 1)[0] for i in ids]), query_ids,
                _normalised(np.load(folder / "embeddings" / "queries.npy").astype(float)),
                {q: str(queries[q]["text"]) for q in query_ids},
                {q: str(queries[q].get("language") or "en") for q in query_ids},
                read_qrels(folder / "qrels" / f"{split}.tsv"))


def labelled_sets(scifact: Pool, xquad: Pool, ref: Reference, top_n: int,
                  seed: int = 0) -> list[PhraseSet]:
    """The present, absent and other-language phrase sets (module docstring)."""
    row = {name: {d: i for i, d in enumerate(p.ids)} for name, p in
           (("scifact", scifact), ("xquad", xquad))}
    sci_r_d = ref.hubness(scifact.corpus.vectors, None, None)
    every = np.arange(len(scifact.ids))
    out = [PhraseSet("scifact (train)", True, len(scifact.ids), [])]
    for qi, qid in enumerate(scifact.query_ids):
        if qid in scifact.judged:
            rel = {row["scifact"][d] for d in scifact.judged[qid] if d in row["scifact"]}
            q = scifact.queries[qi]
            out[0].phrases.append(scifact.corpus.phrase(
                q, scifact.query_texts[qid], "en", every, rel, top_n, sci_r_d,
                ref.query_mean(q, None)))
    present = PhraseSet("xquad-r (dev)", True, len(xquad.ids), [])
    pool = PhraseSet("xquad-r (dev), article removed", False, 0, [])
    small = PhraseSet(f"xquad-r (dev), article removed, {ABSENT_SAMPLE} passages", False,
                      ABSENT_SAMPLE, [])
    foreign = PhraseSet("xquad-r (dev), own language removed", True, 0, [])
    rng = np.random.default_rng(seed)
    hub_cache: dict[str, FloatArray] = {}
    every = np.arange(len(xquad.ids))
    for qi, qid in enumerate(xquad.query_ids):
        if qid not in xquad.judged:
            continue
        q, lang, text = xquad.queries[qi], xquad.query_languages[qid], xquad.query_texts[qid]
        subject = next(iter(xquad.judged[qid])).split("p", 1)[0]
        if subject not in hub_cache:
            hub_cache[subject] = ref.hubness(xquad.corpus.vectors, xquad.article, subject)
        r_d, r_q_ref = hub_cache[subject], ref.query_mean(q, subject)
        rel = {row["xquad"][d] for d in xquad.judged[qid]}
        others = np.flatnonzero(xquad.article != subject)
        picked = np.sort(rng.choice(others, size=min(ABSENT_SAMPLE, others.size),
                                    replace=False))
        kept = np.flatnonzero(xquad.corpus.languages != lang)
        for target, subset, wanted in ((present, every, rel), (pool, others, set()),
                                       (small, picked, set()), (foreign, kept, rel)):
            target.phrases.append(xquad.corpus.phrase(q, text, lang, subset, wanted, top_n,
                                                      r_d, r_q_ref))
            target.size = int(subset.size)
    return [*out, present, pool, small, foreign]


def sample_sets(ref: Reference, settings: Settings) -> list[PhraseSet]:
    """The sample corpus's absent and present phrases, read as the search reads a phrase: one
    candidate list over every vector source (chapters, paragraphs, summaries)."""
    from thalabus_graph.demo import SAMPLE
    from thalabus_graph.embeddings import embedder_from_settings

    docs = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    texts: list[str] = []
    owners: list[str] = []
    langs: list[str] = []
    for d in docs:
        parts = [*d.get("chapters", []), *(p.strip() for c in d.get("chapters", [])
                                          for p in c.split("\n\n") if p.strip()),
                 *d.get("summaries", [])]
        texts += parts
        owners += [d["documentid"]] * len(parts)
        langs += [d.get("language", "en")] * len(parts)
    embedder = embedder_from_settings(settings)
    vectors = _normalised(np.asarray(embedder.embed_passages(texts), dtype=np.float64))
    corpus = Corpus(vectors, np.array(langs), Lexicon(texts))
    r_d = ref.hubness(vectors, None, None)
    owner, every = np.array(owners), np.arange(len(texts))
    out = [PhraseSet("sample corpus, absent phrases", False, len(texts), []),
           PhraseSet("sample corpus, present phrases", True, len(texts), [])]
    phrases = [(lang, p, frozenset[str]()) for lang, p in ABSENT] + list(PRESENT)
    queries = _normalised(np.asarray(embedder.embed_queries([p for _, p, _ in phrases]),
                                     dtype=np.float64))
    for (lang, text, holders), q in zip(phrases, queries, strict=True):
        rel = {int(j) for j in np.flatnonzero(np.isin(owner, list(holders)))}
        out[bool(holders)].phrases.append(corpus.phrase(
            q, text, lang, every, rel, settings.top_n_paragraphs, r_d, ref.query_mean(q, None)))
    return out


# --- signals ------------------------------------------------------------------------------

Signal = Callable[[Phrase], Sequence[float]]

SIGNALS: dict[str, Signal] = {
    "best_cosine": lambda p: [float(p.cos[0])],
    "margin": lambda p: [float(p.cos[0] - p.cos[1:K + 1].mean())],
    "spread_z": lambda p: [float((p.cos[0] - p.cos.mean()) / max(p.cos.std(), 1e-6))],
    "query_gap": lambda p: [float(p.cos[0] - p.r_q_ref)],
    "csls": lambda p: [float(np.max(2 * p.cos - p.r_d) - p.r_q_corpus)],
    "csls_ref": lambda p: [float(np.max(2 * p.cos - p.r_d) - p.r_q_ref)],
    "hub_best": lambda p: [float(-p.r_d[0])],
    "best_cosine+margin": lambda p: [float(p.cos[0]), float(p.cos[0] - p.cos[1:K + 1].mean())],
    "best_cosine+query_gap": lambda p: [float(p.cos[0]), float(p.cos[0] - p.r_q_ref)],
    "best_cosine+hub_best": lambda p: [float(p.cos[0]), float(-p.r_d[0])],
    "best_cosine+other_language": lambda p: [float(p.cos[0]), float(p.other_language)],
    "lexical_best": lambda p: [p.lexical_best],
    "lexical_any": lambda p: [p.lexical_any],
    "best_cosine+lexical_best": lambda p: [float(p.cos[0]), p.lexical_best],
    "best_cosine+lexical_any": lambda p: [float(p.cos[0]), p.lexical_any],
    "best_cosine+lexical_plain": lambda p: [float(p.cos[0]), p.lexical_plain],
    "best_cosine+lexical_plain_top": lambda p: [float(p.cos[0]), p.lexical_plain_top],
    "best_cosine+lexical_plain_candidates": lambda p: [float(p.cos[0]),
                                                       p.lexical_plain_candidates],
    "best_cosine+lexical_idf_candidates": lambda p: [float(p.cos[0]),
                                                     p.lexical_idf_candidates],
    "best_cosine+lexical_best+other_language": lambda p: [float(p.cos[0]), p.lexical_best,
                                                          float(p.other_language)],
    "best_cosine+lexical_any+other_language": lambda p: [float(p.cos[0]), p.lexical_any,
                                                         float(p.other_language)],
}
"""Signal name -> the phrase's features (a gate is a logistic of them)."""
WITH_OTHER_LANGUAGE = {"best_cosine+other_language", "best_cosine+lexical_best+other_language",
                       "best_cosine+lexical_any+other_language"}
"""Signals whose gate is fitted with the other-language set among the present ones."""


def features(signal: Signal, data: PhraseSet) -> FloatArray:
    """The signal's features of every phrase of a set, one row each."""
    return np.asarray([signal(p) for p in data.phrases], dtype=np.float64).reshape(
        len(data.phrases), -1)


def fit_logistic(present: Sequence[FloatArray], absent: Sequence[FloatArray]) -> FloatArray:
    """A logistic gate on standardised features, both classes and every set within its class
    weighing the same (as ``fitting.fit_gate``); returns (intercept, weights...) on the raw
    features."""
    xs, ys, ws = [], [], []
    for label, sets in ((1.0, present), (0.0, absent)):
        for rows in sets:
            xs.append(rows)
            ys.append(np.full(len(rows), label))
            ws.append(np.full(len(rows), 0.5 / len(sets) / len(rows)))
    x = np.vstack(xs)
    mean, scale = x.mean(axis=0), np.where(x.std(axis=0) > 0, x.std(axis=0), 1.0)
    design = np.column_stack([np.ones(len(x)), (x - mean) / scale])
    y, w = np.concatenate(ys), np.concatenate(ws)
    theta = np.zeros(design.shape[1])
    for _ in range(200):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ theta, -500, 500)))
        grad = design.T @ (w * (p - y)) + 1e-6 * theta
        hess = (design * (w * p * (1 - p))[:, None]).T @ design + 1e-6 * np.eye(len(theta))
        step = np.linalg.solve(hess, grad)
        theta -= step
        if float(np.abs(step).max()) < 1e-12:
            break
    weights = theta[1:] / scale
    return np.concatenate([[theta[0] - float(weights @ mean)], weights])


def auc(positive: FloatArray, negative: FloatArray) -> float:
    """P(a present phrase's score > an absent one's), ties counting half."""
    if not len(positive) or not len(negative):
        return float("nan")
    both = np.concatenate([positive, negative])
    order = both.argsort(kind="stable")
    ranks = np.empty(len(both))
    ranks[order] = np.arange(1, len(both) + 1)
    for value in np.unique(both):
        tied = both == value
        ranks[tied] = ranks[tied].mean()
    n_pos = len(positive)
    return float((ranks[:n_pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * len(negative)))


def map_probabilities(calibration: Calibration, data: PhraseSet) -> None:
    """The shipped map's P(relevant) of every candidate before any gate, and the set's
    cosines, labels and ideal DCG@10 as matrices (every phrase of a set has as many
    candidates)."""
    source = calibration.map_for(DEFAULT_SOURCE)
    probs = []
    for p in data.phrases:
        bg = background(list(p.cos), data.size, calibration.skip)
        probs.append([source.probability(evidence(float(c), bg)) for c in p.cos])
    data.probs = np.asarray(probs, dtype=np.float64)
    data.reading = calibration.reading
    data.cos = np.vstack([p.cos for p in data.phrases])
    data.relevant = np.vstack([p.relevant for p in data.phrases])
    data.ideal = np.asarray([(1.0 / np.log2(np.arange(2, min(p.n_relevant, 10) + 2))).sum()
                             for p in data.phrases])


def outcome(data: PhraseSet, gates: FloatArray, min_score: float) -> dict[str, float]:
    """With these per-phrase gates: share of phrases emptied by ``MIN_SCORE`` and, for a
    present set, nDCG@10 after it and the share of relevant / non-relevant candidates it
    drops."""
    read = read_at_prior(data.probs * gates[:, None], data.reading)
    scores = (1 - RAW_WEIGHT) * read + RAW_WEIGHT * (1 + data.cos) / 2
    kept = scores >= min_score
    out = {"emptied": float((~kept.any(axis=1)).mean())}
    if data.present:
        rel = data.relevant
        rank = np.cumsum(kept, axis=1)
        gain = rel & kept & (rank <= 10)
        dcg = (gain / np.log2(np.maximum(rank, 1) + 1.0)).sum(axis=1)
        ndcg = np.divide(dcg, data.ideal, out=np.zeros_like(dcg), where=data.ideal > 0)
        out |= {"ndcg@10": float(ndcg.mean()),
                "relevant_dropped": float((rel & ~kept).sum() / max(int(rel.sum()), 1)),
                "non_relevant_dropped": float((~rel & ~kept).sum() / max(int((~rel).sum()), 1))}
    return out


def no_gate_ndcg(data: PhraseSet) -> float:
    """nDCG@10 of a present set on the index scale (nothing dropped)."""
    return float(np.mean([ndcg10(p.relevant, p.n_relevant) for p in data.phrases]))


MODES = ("soft", "hard")
"""How a gate acts: ``soft`` multiplies every hit's probability by it (the shipped rule),
``hard`` keeps a phrase whole when it is at least 0.5 and empties it otherwise."""
TOLERANCE = 0.002
"""nDCG@10 loss of the ``near`` operating point."""


def _gates(theta: FloatArray, x: FloatArray, shift: float, mode: str) -> FloatArray:
    z = theta[0] + x @ theta[1:] + shift
    soft = 1.0 / (1.0 + np.exp(-np.clip(z, -500, 500)))
    return np.asarray(soft if mode == "soft" else (z >= 0).astype(float), dtype=np.float64)


def evaluate(name: str, sets: list[PhraseSet], settings: Settings) -> dict[str, Any]:
    """AUCs, the fitted gate and its trade-off table (per mode) for one signal."""
    x = {s.name: features(SIGNALS[name], s) for s in sets}
    fitted_present = [s.name for s in sets[:2]]
    if name in WITH_OTHER_LANGUAGE:
        fitted_present.append(sets[4].name)
    fitted_absent = [sets[2].name, sets[3].name]
    theta = fit_logistic([x[n] for n in fitted_present], [x[n] for n in fitted_absent])
    lin = {n: theta[0] + v @ theta[1:] for n, v in x.items()}
    pairs = [(p, a) for p in (sets[0].name, sets[1].name, sets[4].name)
             for a in fitted_absent]
    if len(sets) > 5:
        pairs.append((sets[6].name, sets[5].name))
    aucs = {f"{p} vs {a}": auc(lin[p], lin[a]) for p, a in pairs}
    tables: dict[str, list[dict[str, Any]]] = {}
    for mode in MODES:
        tables[mode] = []
        for shift in SHIFTS:
            row: dict[str, Any] = {"shift": float(shift)}
            for s in sets:
                row[s.name] = outcome(s, _gates(theta, x[s.name], float(shift), mode),
                                      settings.min_score)
            tables[mode].append(row)
    return {"features": len(theta) - 1, "theta": theta.tolist(),
            "fitted_present": fitted_present, "fitted_absent": fitted_absent,
            "auc": aucs, "tables": tables}


def silenced(row: dict[str, Any], sets: list[PhraseSet]) -> float:
    """Mean share of the two training absent sets' phrases a row empties."""
    return float((row[sets[2].name]["emptied"] + row[sets[3].name]["emptied"]) / 2)


def operating_points(table: list[dict[str, Any]], sets: list[PhraseSet],
                     baseline: dict[str, float], shipped_pool: float) -> dict[str, Any]:
    """Rows of a trade-off table: ``lossless`` silences the most training absent phrases
    with neither present set's nDCG@10 after ``MIN_SCORE`` below the index scale's, ``near``
    the same within ``TOLERANCE``, ``matched`` keeps the best xquad-r nDCG@10 while silencing
    at least the shipped gate's share of the absent pool (None: no such row)."""
    def best(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
        return max(rows, key=lambda r: (silenced(r, sets), -r["shift"])) if rows else None

    lossless = [r for r in table
                if all(r[s.name]["ndcg@10"] >= baseline[s.name] - 1e-9 for s in sets[:2])]
    near = [r for r in table
            if all(r[s.name]["ndcg@10"] >= baseline[s.name] - TOLERANCE for s in sets[:2])]
    matched = [r for r in table if r[sets[2].name]["emptied"] >= shipped_pool - 1e-9]
    return {"lossless": best(lossless), f"near ({TOLERANCE})": best(near),
            "matched": max(matched, key=lambda r: (r[sets[1].name]["ndcg@10"], -r["shift"]))
            if matched else None}


def _line(row: dict[str, Any] | None, sets: list[PhraseSet]) -> str:
    if row is None:
        return "none"
    short = ["sci", "xq", "abs-pool", "abs-90", "xq-other", "smp-abs", "smp-pres"]
    parts = [f"shift {row['shift']:+.2f}"]
    for tag, s in zip(short, sets, strict=False):
        r = row[s.name]
        if tag in {"abs-pool", "abs-90", "smp-abs"}:
            parts.append(f"{tag} silenced {r['emptied']:.1%}")
        elif tag in {"sci", "xq"}:
            parts.append(f"{tag} nDCG {r['ndcg@10']:.4f} rel-drop {r['relevant_dropped']:.1%}"
                         f" non-drop {r['non_relevant_dropped']:.1%} emptied {r['emptied']:.1%}")
        else:
            parts.append(f"{tag} emptied {r['emptied']:.1%}")
    return "; ".join(parts)


def _shipped(gate: Gate, phrase: Phrase) -> float:
    """The shipped gate of a phrase: its best cosine and, when the gate reads it, its lexical
    share among its candidates (``lexical_plain_candidates``, what the search reads)."""
    return gate.probability(float(phrase.cos[0]), phrase.lexical_plain_candidates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--json", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--no-sample", action="store_true", help="skip the sample corpus")
    parser.add_argument("--signals", nargs="*", default=list(SIGNALS), choices=list(SIGNALS),
                        help="measure only these signals (default: all)")
    args = parser.parse_args()
    settings = Settings()
    calibration = shipped(settings.embedder_model)
    if calibration is None or calibration.gate is None:
        raise SystemExit(f"no shipped calibration with a gate for {settings.embedder_model}")
    scifact = read_pool(args.data / "scifact", "train")
    xquad = read_pool(args.data / "xquad-r", "dev")
    asked = [i for i, q in enumerate(xquad.query_ids) if q in xquad.judged]
    ref = Reference(xquad.queries[asked], np.array(
        [next(iter(xquad.judged[xquad.query_ids[i]])).split("p", 1)[0] for i in asked]))
    sets = labelled_sets(scifact, xquad, ref, settings.top_n_chapters)
    if not args.no_sample:
        sets += sample_sets(ref, settings)
    for s in sets:
        map_probabilities(calibration, s)
    ones = {s.name: outcome(s, np.ones(len(s.phrases)), settings.min_score) for s in sets}
    gate = calibration.gate
    shipped_gate = {s.name: outcome(s, np.asarray([_shipped(gate, p) for p in s.phrases]),
                                    settings.min_score)
                    for s in sets}
    shipped_hard = {s.name: outcome(s, np.asarray([float(_shipped(gate, p) >= 0.5)
                                                   for p in s.phrases]), settings.min_score)
                    for s in sets}
    baseline = {s.name: no_gate_ndcg(s) for s in sets[:2]}
    results: dict[str, Any] = {"model": settings.embedder_model, "k": K,
                               "top_n": settings.top_n_chapters,
                               "sets": {s.name: {"phrases": len(s.phrases), "size": s.size,
                                                 "present": s.present} for s in sets},
                               "ndcg@10_index_scale": baseline, "map_only": ones,
                               "shipped_gate": shipped_gate, "shipped_gate_hard": shipped_hard,
                               "signals": {}}
    print("nDCG@10 on the index scale: " + ", ".join(f"{n} {v:.4f}"
                                                      for n, v in baseline.items()))
    print("no gate: " + _line({"shift": 0.0, **ones}, sets))
    print("shipped gate: " + _line({"shift": 0.0, **shipped_gate}, sets))
    print("shipped gate, hard: " + _line({"shift": 0.0, **shipped_hard}, sets))
    for name in args.signals:
        result = evaluate(name, sets, settings)
        print(f"\n== {name}: theta {np.round(result['theta'], 3).tolist()}")
        print("   AUC " + "; ".join(f"{k} {v:.3f}" for k, v in result["auc"].items()))
        result["operating_points"] = {}
        for mode, table in result["tables"].items():
            points = operating_points(table, sets, baseline,
                                      shipped_gate[sets[2].name]["emptied"])
            points["fitted"] = next(r for r in table if r["shift"] == 0.0)
            result["operating_points"][mode] = points
            for point, row in points.items():
                print(f"   {mode} {point}: {_line(row, sets)}")
            result["tables"][mode] = [r for r in table if float(r["shift"]) * 2 % 1 == 0]
        results["signals"][name] = result
    write_json(args.json, results)


if __name__ == "__main__":
    main()
