"""Fit and measure the semantic-score calibration on the labelled training sets.

Run ``python -m benchmarks.calibration [--data ../shared/data] [--json OUT] [--write]
[--sample]``, or ``python -m benchmarks.calibration --reliability FILE.png`` for the
calibration's reliability alone (below). Needs no Neo4j: each query's ``TOP_N_CHAPTERS``
candidates by cosine over the precomputed multilingual-e5-small vectors (SciFact train,
xquad-r dev) are what an unfiltered chapter search returns, one chapter per document.

It measures, per set:

- ``cosine``: the best any single cosine threshold can do (the threshold that drops half of
  the non-relevant candidates, and the share of relevant ones it drops), which is what every
  calibration of the cosine alone can reach;
- ``tail-evidence``: the shipped model (``thalabus_graph.scoring.calibration``), fitted on both sets
  (each weighs the same): the share of non-relevant and relevant candidates below
  ``MIN_SCORE`` and ``MIN_RERANKING_SCORE_DOC``, and nDCG@10 of the single phrase before and
  after ``MIN_SCORE`` (the map keeps each query's order, so only dropped hits can change it);
- with ``--fusion``: the default ``language-slots`` fusion of each query's semantic
  candidates with a bag-of-words BM25 search over the same documents (Lucene's k1 1.2, b 0.75,
  lowercase word tokens, top ``TOP_N_TEXT``; computed here, so it approximates the engine's
  text search): nDCG@10 of the fused list as today, after ``PhraseScale`` (fusion on the index
  scale, then calibrated, ``MIN_SCORE`` applied) and, for comparison, with calibrated scores
  fed into the fusion; and the drop rates on the fused list;
- with ``--uri URI``: the same through the engine on Neo4j (the database there is WIPED and
  loaded with each set, as ``benchmarks.quality`` does): every query as one phrase at the
  defaults, the share of the fragments the index scale returns (``CALIBRATION_FILE=none``,
  the fused list) that the shipped calibration's ``MIN_SCORE`` drops, relevant and not, and
  nDCG@10 of the phrase's documents on each scale (``--baseline FILE`` adds another
  calibration file to compare);
- with ``--sample``: phrases about topics absent from the sample corpus (and present ones), embedded
  with the local e5 model, and the best calibrated score each gets per source.

The phrase gate (``calibration.Gate``) is fitted here too, on each phrase's best candidate
cosine and its lexical share among its candidates (``lexical.share_of``; ``--cosine-gate``:
the cosine alone): phrases that have a relevant passage are the labelled queries of both sets;
phrases about an absent topic are xquad-r's questions with every passage of their article (in
every language) removed from the pool, read against the rest of the pool and against
``ABSENT_SAMPLE`` random passages of it (a corpus the size of the sample corpus's chapters).
The fitted gate is then moved along its logit to its zero-loss operating point
(``zero_loss_gate``), and further by ``--gate-margin`` (a loss only the engine's fusion shows,
measured with ``--uri``). Nothing of the sample corpus is fitted on: ``--sample`` checks the result
there.

``--write`` stores the fitted calibration as the package's shipped file for the model.

``--reliability FILE.png`` measures the calibration on queries it was not fitted on, as
``thalabus-graph calibrate --report`` does (``calibrate_cmd.held_out_report``) on both sets:
the map fitted on 70% of each set's queries (a fixed seed), the shipped phrase gates, and the
reliability diagram and expected calibration error of the other 30% (10 equal-width bins, at
the prior odds a score is read at); it draws FILE.png and writes the numbers to
FILE.json, and nothing else is run.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.report import write_json
from benchmarks.sample_topics import ABSENT, PRESENT
from thalabus_graph.cli.calibrate_cmd import held_out_report, labelled_set, read_qrels
from thalabus_graph.cli.calibrate_plot import draw
from thalabus_graph.fragments import Fragment
from thalabus_graph.scoring.calibration import (
    DEFAULT_SOURCE,
    RAW_WEIGHT,
    Calibration,
    Gate,
    SourceMap,
    evidence,
)
from thalabus_graph.scoring.calibration_file import load
from thalabus_graph.scoring.fitting import Labelled, best_hits, fit, fit_gate, gate_features
from thalabus_graph.scoring.fusion import LanguageSlots
from thalabus_graph.scoring.lexical import share_of
from thalabus_graph.scoring.scale import PhraseScale
from thalabus_graph.scoring.tokens import lexical_words
from thalabus_graph.settings import Settings

DEFAULT_DATA = Path("../shared/data")
DEFAULT_OUT = Path(".thalabus/benchmarks/calibration.json")
SHIPPED = Path("thalabus_graph/resources/calibration")
WORD = re.compile(r"\w+")
SETS = (("scifact", "train"), ("xquad-r", "dev"))
ABSENT_SAMPLE = 90
"""Passages of the small pool an absent-topic question is read against (the sample corpus has
90 chapters)."""



def read_at_prior(gated: np.ndarray[Any, Any],
                  reading: SourceMap | None) -> np.ndarray[Any, Any]:
    """``calibration.at_prior`` of every gated probability of an array (0 and 1 kept)."""
    if reading is None:
        return gated
    inside = (gated > 0.0) & (gated < 1.0)
    q = np.where(inside, gated, 0.5)
    logit = reading.intercept + reading.slope * (np.log(q) - np.log1p(-q))
    return np.where(inside, 1.0 / (1.0 + np.exp(-np.clip(logit, -700, 700))), gated)


def ndcg10(labels: np.ndarray[Any, Any], n_relevant: int) -> float:
    """nDCG@10 of one ranked list of binary labels with ``n_relevant`` judged relevant."""
    gains = labels[:10].astype(float)
    dcg = float((gains / np.log2(np.arange(2, gains.size + 2))).sum())
    ideal = float((1.0 / np.log2(np.arange(2, min(n_relevant, 10) + 2))).sum())
    return dcg / ideal if ideal else 0.0


def best_cosine_threshold(labelled: Labelled) -> dict[str, float]:
    """The cosine threshold dropping half of the non-relevant candidates and the share of
    relevant candidates it drops: no monotone map of the cosine alone does better."""
    cos = np.concatenate(list(labelled.cosines))
    rel = np.concatenate(list(labelled.relevant))
    threshold = float(np.median(cos[~rel]))
    return {"threshold_cosine": threshold,
            "relevant_dropped": float((cos[rel] < threshold).mean())}


@dataclasses.dataclass(frozen=True)
class XquadPool:
    """What the gate's xquad-r sets are built from: judgments, passage ids and rows
    (``aNNpM-ll``: article ``aNN``), the precomputed vectors as stored, the passages and
    queries as read, and each passage's words (``tokens.lexical_words``)."""

    judged: dict[str, set[str]]
    ids: list[str]
    query_ids: list[str]
    corpus: np.ndarray[Any, Any]
    vectors: np.ndarray[Any, Any]
    passages: dict[str, dict[str, Any]]
    queries: dict[str, dict[str, Any]]
    found: list[frozenset[str]]
    article: np.ndarray[Any, Any]

    @classmethod
    def read(cls, folder: Path, split: str) -> XquadPool:
        """Read the pool of ``folder`` with the judgments of ``split``."""
        ids = json.loads((folder / "embeddings" / "corpus.ids.json").read_text())
        by_id = {str(d["_id"]): d for d in map(json.loads, (folder / "corpus.jsonl").open())}
        return cls(read_qrels(folder / "qrels" / f"{split}.tsv"), ids,
                   json.loads((folder / "embeddings" / "queries.ids.json").read_text()),
                   np.load(folder / "embeddings" / "corpus.npy").astype(np.float64),
                   np.load(folder / "embeddings" / "queries.npy").astype(np.float64), by_id,
                   {str(q["_id"]): q for q in map(json.loads,
                                                  (folder / "queries.jsonl").open())},
                   [lexical_words(f"{by_id[i].get('title', '')} {by_id[i].get('text', '')}".strip())
                    for i in ids],
                   np.array([i.split("p", 1)[0] for i in ids]))


def absent_topics_of_xquad(folder: Path, split: str, settings: Settings,
                           seed: int = 0) -> list[Labelled]:
    """xquad-r's judged questions with their article's passages removed (ids ``aNNpM-ll``:
    article ``aNN``), as unlabelled candidate lists with each question's lexical share among
    its candidates (``lexical.share_of``): against the rest of the pool, and against
    ``ABSENT_SAMPLE`` random passages of it."""
    x = XquadPool.read(folder, split)
    judged, query_ids, corpus, vectors, found, article = (
        x.judged, x.query_ids, x.corpus, x.vectors, x.found, x.article)
    asked = {q: str(x.queries[q]["text"]) for q in x.queries}
    rng = np.random.default_rng(seed)
    size = 0
    pool: list[np.ndarray[Any, Any]] = []
    small: list[np.ndarray[Any, Any]] = []
    shares: tuple[list[float], list[float]] = ([], [])
    for row, qid in enumerate(query_ids):
        if qid not in judged:
            continue
        subject = {d.split("p", 1)[0] for d in judged[qid]}
        others = np.flatnonzero(~np.isin(article, list(subject)))
        sims = corpus[others] @ vectors[row]
        order = np.argsort(-sims, kind="stable")[: settings.top_n_chapters]
        pool.append(sims[order])
        size = int(others.size)
        picked = rng.choice(sims.size, size=min(ABSENT_SAMPLE, sims.size), replace=False)
        small.append(np.sort(sims[picked])[::-1])
        phrase = lexical_words(asked[qid])
        shares[0].append(share_of(phrase, (found[j] for j in others[order])))
        shares[1].append(share_of(phrase, (found[j] for j in others[picked])))
    none = [np.zeros(len(c), dtype=bool) for c in pool]
    if not pool:
        raise ValueError(f"no judged question in {folder}")
    return [Labelled(f"xquad-r ({split}), article removed", pool, none, size, shares[0]),
            Labelled(f"xquad-r ({split}), article removed, {ABSENT_SAMPLE} passages", small,
                     [np.zeros(len(c), dtype=bool) for c in small], ABSENT_SAMPLE, shares[1])]


def other_language_sets(folder: Path, split: str, settings: Settings,
                        seed: int = 0) -> tuple[Labelled, list[int], list[Labelled]]:
    """xquad-r's judged questions read against the pool without a passage in the question's
    own language: what a phrase asked in a language the graph lacks looks like. Returns the
    questions with their relevant passages (in the two other languages; their judged counts
    beside), and, with their article removed too, against the rest and against
    ``ABSENT_SAMPLE`` random passages of it: a topic the graph lacks, asked in a language it
    lacks. Each with its lexical share among its candidates (what the gate reads)."""
    x = XquadPool.read(folder, split)
    judged, query_ids, found, article, asked = (x.judged, x.query_ids, x.found, x.article,
                                                x.queries)
    corpus = x.corpus / np.linalg.norm(x.corpus, axis=1, keepdims=True)
    vectors = x.vectors / np.linalg.norm(x.vectors, axis=1, keepdims=True)
    language = np.array([str(x.passages[i].get("language") or "en") for i in x.ids])
    row_of = {d: r for r, d in enumerate(x.ids)}
    rng = np.random.default_rng(seed)
    names = ("own language removed", "own language and article removed",
             f"own language and article removed, {ABSENT_SAMPLE} passages")
    lists: tuple[list[Any], ...] = ([], [], [])
    labels: list[np.ndarray[Any, Any]] = []
    shares: tuple[list[float], ...] = ([], [], [])
    sizes = [0, 0, ABSENT_SAMPLE]
    totals: list[int] = []
    for row, qid in enumerate(query_ids):
        if qid not in judged:
            continue
        own = str(asked[qid].get("language") or "en")
        subject = {d.split("p", 1)[0] for d in judged[qid]}
        kept = np.flatnonzero(language != own)
        lacking = np.flatnonzero((language != own) & ~np.isin(article, list(subject)))
        picked = np.sort(rng.choice(lacking, size=min(ABSENT_SAMPLE, lacking.size),
                                    replace=False))
        relevant = {row_of[d] for d in judged[qid] if d in row_of}
        phrase = lexical_words(str(asked[qid]["text"]))
        for i, subset in enumerate((kept, lacking, picked)):
            sims = corpus[subset] @ vectors[row]
            order = np.argsort(-sims, kind="stable")[: settings.top_n_chapters]
            lists[i].append(sims[order])
            shares[i].append(share_of(phrase, (found[j] for j in subset[order])))
            if i < 2:
                sizes[i] = int(subset.size)
            if i == 0:
                labels.append(np.fromiter((int(j) in relevant for j in subset[order]),
                                          dtype=bool, count=order.size))
                totals.append(len(relevant & set(kept.tolist())))
    present = Labelled(f"xquad-r ({split}), {names[0]}", lists[0], labels, sizes[0], shares[0])
    absent = [Labelled(f"xquad-r ({split}), {names[i]}", lists[i],
                       [np.zeros(len(c), dtype=bool) for c in lists[i]], sizes[i], shares[i])
              for i in (1, 2)]
    return present, totals, absent


def foreign_rates(calibration: Calibration, data: Labelled, totals: list[int] | None,
                  min_score: float) -> dict[str, dict[str, float]]:
    """A set of phrases in a language the graph lacks, through the calibration's gates: as if
    the language were held (``gate`` alone, with the phrase's lexical share) and as the
    search reads it (``foreign``: the larger of ``gate`` and ``foreign_gate``)."""
    sweep = Sweep.of(data, calibration, totals)
    out: dict[str, dict[str, float]] = {}
    for name, foreign in (("held", False), ("foreign", True)):
        gates = np.asarray([calibration.gate_of(dataclasses.replace(
            calibration.background(list(c), data.size, share), foreign=foreign))
            for c, share in zip(data.cosines, shares_of(data), strict=True)])
        out[name] = sweep.outcome_of(gates, min_score)
    return out


@dataclasses.dataclass
class Sweep:
    """One set's candidates on the calibrated scale before the gate, as matrices (one row
    per phrase, candidates best first): the map's P(relevant), the cosines, the labels, the
    ideal DCG@10, the gate's logit of each phrase (``gate_features``) and the calibration's
    reading at the data's prior (``read_at_prior``)."""

    name: str
    present: bool
    probs: np.ndarray[Any, Any]
    cos: np.ndarray[Any, Any]
    relevant: np.ndarray[Any, Any]
    ideal: np.ndarray[Any, Any]
    features: np.ndarray[Any, Any]
    reading: SourceMap | None

    @classmethod
    def of(cls, data: Labelled, calibration: Calibration, totals: list[int] | None) -> Sweep:
        """The sweep of a set (``totals``: each query's judged relevant count; None for a
        set of absent topics)."""
        source = calibration.map_for(DEFAULT_SOURCE)
        width = max(len(c) for c in data.cosines)
        probs = np.zeros((len(data.cosines), width))
        cos = np.full((len(data.cosines), width), -1.0)
        rel = np.zeros((len(data.cosines), width), dtype=bool)
        for i, (c, r) in enumerate(zip(data.cosines, data.relevant, strict=True)):
            bg = calibration.background(list(c), data.size)
            probs[i, :len(c)] = [source.probability(evidence(float(x), bg)) for x in c]
            cos[i, :len(c)] = c
            rel[i, :len(r)] = r
        ideal = np.asarray([(1.0 / np.log2(np.arange(2, min(t, 10) + 2))).sum()
                            for t in (totals or [0] * len(data.cosines))])
        return cls(data.name, totals is not None, probs, cos, rel, ideal,
                   gate_features(data).reshape(len(data.cosines), -1), calibration.reading)

    def index_ndcg(self) -> float:
        """nDCG@10 on the index scale (nothing dropped)."""
        return self.outcome(None, 0.0)["ndcg@10"]

    def outcome(self, gate: Gate | None, min_score: float) -> dict[str, float]:
        """With this gate: the share of phrases emptied by ``MIN_SCORE`` and, for a present
        set, nDCG@10 after it (as ``measure``)."""
        gates = np.ones(len(self.features)) if gate is None else np.asarray(
            [gate.probability(float(r[0]), float(r[1]) if len(r) > 1 else None)
             for r in self.features])
        return self.outcome_of(gates, min_score)

    def outcome_of(self, gates: np.ndarray[Any, Any], min_score: float) -> dict[str, float]:
        """``outcome`` with each phrase's gate given."""
        read = read_at_prior(self.probs * gates[:, None], self.reading)
        scores = (1 - RAW_WEIGHT) * read + RAW_WEIGHT * (1 + self.cos) / 2
        kept = (scores >= min_score) & (self.cos > -1.0)
        out = {"emptied": float((~kept.any(axis=1)).mean())}
        if self.present:
            rank = np.cumsum(kept, axis=1)
            gain = self.relevant & kept & (rank <= 10)
            dcg = (gain / np.log2(np.maximum(rank, 1) + 1.0)).sum(axis=1)
            ndcg = np.divide(dcg, self.ideal, out=np.zeros_like(dcg), where=self.ideal > 0)
            out["ndcg@10"] = float(ndcg.mean())
        return out


SHIFTS = np.round(np.arange(-6.0, 6.01, 0.1), 2)
"""Logit shifts of the fitted gate swept for its operating point (positive: more lenient)."""


def zero_loss_gate(fitted: Gate, present: list[Sweep], absent: list[Sweep],
                   min_score: float) -> tuple[Gate, list[dict[str, Any]]]:
    """The operating point of a fitted gate: of its logit shifts (``SHIFTS``), the one that
    empties the most absent phrases (mean over the absent sets) while no present set's
    nDCG@10 after ``MIN_SCORE`` falls below its index-scale nDCG@10 (nothing dropped); the
    smallest such shift on a tie. Returns the shifted gate and the sweep's rows."""
    baseline = {s.name: s.index_ndcg() for s in present}
    rows: list[dict[str, Any]] = []
    for shift in SHIFTS:
        gate = fitted.shifted(float(shift))
        row: dict[str, Any] = {"shift": float(shift)}
        for s in (*present, *absent):
            row[s.name] = s.outcome(gate, min_score)
        row["silenced"] = float(np.mean([row[s.name]["emptied"] for s in absent]))
        row["lossless"] = all(row[s.name]["ndcg@10"] >= baseline[s.name] - 1e-9
                              for s in present)
        rows.append(row)
    allowed = [r for r in rows if r["lossless"]]
    if not allowed:
        raise ValueError("no shift of the fitted gate keeps nDCG@10 on every present set")
    best = max(allowed, key=lambda r: (r["silenced"], -r["shift"]))
    return fitted.shifted(best["shift"]), rows


def shares_of(data: Labelled) -> list[float | None]:
    """Every query's lexical share (None for each when the set has none)."""
    return list(data.shares) if data.shares is not None else [None] * len(data.cosines)


def gate_rates(calibration: Calibration, data: Labelled) -> dict[str, float]:
    """Share of a set's phrases whose gate empties them (even their best hit under
    ``MIN_SCORE``) and their median gate."""
    gates, emptied = [], 0
    for cos, share in zip(data.cosines, shares_of(data), strict=True):
        scores = calibration.scores(DEFAULT_SOURCE, list(cos), data.size, share)
        emptied += max(scores) < Settings().min_score
        gates.append(calibration.gate_of(calibration.background(list(cos), data.size, share)))
    return {"phrases": len(gates), "emptied": emptied / max(len(gates), 1),
            "median_gate": float(np.median(gates)) if gates else 0.0}


def measure(labelled: Labelled, calibration: Calibration, settings: Settings,
            n_relevant: list[int]) -> dict[str, Any]:
    """Drop rates at both thresholds and nDCG@10 before and after MIN_SCORE."""
    rel = np.concatenate(list(labelled.relevant))
    scores = np.concatenate([calibration.scores(DEFAULT_SOURCE, list(c), labelled.size, share)
                             for c, share in zip(labelled.cosines, shares_of(labelled),
                                                 strict=True)])
    out: dict[str, Any] = {"queries": len(labelled.cosines), "candidates": int(rel.size),
                           "relevant_candidates": int(rel.sum())}
    for name in ("min_score", "min_reranking_score_doc"):
        below = scores < getattr(settings, name)
        out[name] = {"value": getattr(settings, name),
                     "non_relevant_dropped": float(below[~rel].mean()),
                     "relevant_dropped": float(below[rel].mean())}
    before, after, start = [], [], 0
    for labels, total in zip(labelled.relevant, n_relevant, strict=True):
        kept = scores[start:start + labels.size] >= settings.min_score
        start += labels.size
        before.append(ndcg10(labels, total))
        after.append(ndcg10(labels[kept], total))
    out["ndcg@10"] = {"before": float(np.mean(before)), "after_min_score": float(np.mean(after))}
    out["best_cosine_only"] = best_cosine_threshold(labelled)
    return out


class Bm25:
    """A small BM25 over the documents' title + text (the benchmark's stand-in for the
    engine's full-text search)."""

    def __init__(self, texts: list[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        tokens = [WORD.findall(t.lower()) for t in texts]
        self.length = np.array([len(t) for t in tokens], dtype=float)
        self.average = float(self.length.mean()) if tokens else 1.0
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for row, bag in enumerate(tokens):
            for word, count in Counter(bag).items():
                self.postings[word].append((row, count))

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """The best ``k`` rows with a positive score, best first."""
        n = self.length.size
        scores = np.zeros(n)
        for word in set(WORD.findall(query.lower())):
            posting = self.postings.get(word, [])
            if not posting:
                continue
            idf = math.log(1 + (n - len(posting) + 0.5) / (len(posting) + 0.5))
            for row, count in posting:
                norm = self.k1 * (1 - self.b + self.b * self.length[row] / self.average)
                scores[row] += idf * count * (self.k1 + 1) / (count + norm)
        top = np.argsort(-scores, kind="stable")[:k]
        return [(int(r), float(scores[r])) for r in top if scores[r] > 0]


def fuse(phrase: str, semantic: list[Fragment], text: list[Fragment],
         languages: dict[str, str | None], settings: Settings) -> list[Fragment]:
    """The default ``language-slots`` fusion of one phrase's candidates."""
    rule = LanguageSlots.fit(phrase, semantic, text, languages=languages,
                             text_weight=settings.fusion_text_weight,
                             full_coverage=settings.fusion_full_coverage)
    return rule.fuse(semantic, text)


def fused_quality(folder: Path, split: str, calibration: Calibration,
                  settings: Settings) -> dict[str, Any]:
    """nDCG@10 and drop rates of the fused phrase, as today and on the calibrated scale."""
    docs = [json.loads(line) for line in (folder / "corpus.jsonl").open(encoding="utf-8")]
    queries = {q["_id"]: q["text"] for q in map(json.loads, (folder / "queries.jsonl").open())}
    judged = read_qrels(folder / "qrels" / f"{split}.tsv")
    ids = json.loads((folder / "embeddings" / "corpus.ids.json").read_text())
    query_ids = json.loads((folder / "embeddings" / "queries.ids.json").read_text())
    corpus = np.load(folder / "embeddings" / "corpus.npy").astype(np.float64)
    vectors = np.load(folder / "embeddings" / "queries.npy").astype(np.float64)
    by_id = {str(d["_id"]): d for d in docs}
    texts = [f"{by_id[i].get('title', '')} {by_id[i].get('text', '')}".strip() for i in ids]
    languages = {i: by_id[i].get("language") for i in ids}
    bm25 = Bm25(texts)
    ndcg: dict[str, list[float]] = defaultdict(list)
    counts = Counter[str]()
    for row, qid in enumerate(query_ids):
        if qid not in judged:
            continue
        relevant = judged[qid]
        sims = corpus @ vectors[row]
        top = np.argsort(-sims, kind="stable")[: settings.top_n_chapters]

        def fragment(r: int, score: float, kind: str) -> Fragment:
            return Fragment(f"{ids[r]}-c1", ids[r], texts[r], score, "chapters",
                            (f"{kind}:chapters",))

        semantic = [fragment(int(r), (1 + float(sims[r])) / 2, "semantic") for r in top]
        found = bm25.search(queries[qid], settings.top_n_text)
        text = [fragment(r, s / found[0][1], "text") for r, s in found]
        langs = {f.documentid: languages[f.documentid] for f in (*semantic, *text)}

        today = fuse(queries[qid], semantic, text, langs, settings)
        scale = PhraseScale(settings, calibration)  # keyed by the phrase: the gate reads it
        scale.remember(queries[qid], semantic, {"chapters": len(ids)})
        calibrated = scale.apply(queries[qid], today)
        fed = [f for f in fuse(queries[qid], scale.apply(queries[qid], semantic), text, langs,
                               settings)
               if f.score >= settings.min_score]
        for name, ranked in (("fused today", today), ("fused, then calibrated", calibrated),
                             ("calibrated, then fused", fed)):
            ndcg[name].append(ndcg10(np.array([f.documentid in relevant for f in ranked]),
                                     len(relevant)))
        kept = {f.documentid for f in calibrated}
        returned = {f.documentid for f in today}
        counts["non_relevant"] += len(returned - relevant)
        counts["non_relevant_dropped"] += len(returned - relevant - kept)
        counts["relevant"] += len(returned & relevant)
        counts["relevant_dropped"] += len((returned & relevant) - kept)
    return {"ndcg@10": {name: float(np.mean(v)) for name, v in ndcg.items()},
            "min_score_on_the_fused_list": {
                "non_relevant_dropped": counts["non_relevant_dropped"] / counts["non_relevant"],
                "relevant_dropped": counts["relevant_dropped"] / max(counts["relevant"], 1)}}


def engine_drop_rates(uri: str, folder: Path, split: str,
                      files: dict[str, str]) -> dict[str, dict[str, float]]:
    """Through ``ThalabusGraph`` (the database at ``uri`` is wiped and loaded): for each
    calibration (name -> ``CALIBRATION_FILE``; ``""`` the shipped one), what its ``MIN_SCORE``
    drops of the fragments a phrase returns on the index scale (``CALIBRATION_FILE=none``),
    and nDCG@10 of the phrase's documents (first fragment of each) on both scales."""
    from benchmarks.quality import (
        DOC_PREFIX,
        base_settings,
        connect,
        load,
        load_corpus,
        semantic_phrase,
    )

    corpus = load_corpus(folder, split)
    settings = base_settings()
    raw = connect(uri, settings.replace(calibration_file="none"), corpus)
    load(raw, corpus)
    graphs = {name: connect(uri, settings.replace(calibration_file=path), corpus)
              for name, path in files.items()}
    counts: dict[str, Counter[str]] = {name: Counter() for name in graphs}
    ndcg: dict[str, list[float]] = defaultdict(list)

    def ranked(fragments: list[Fragment], relevant: set[str]) -> float:
        docs = list(dict.fromkeys(f.documentid for f in fragments))
        return ndcg10(np.array([d in relevant for d in docs], dtype=bool), len(relevant))

    for qid, text in corpus.queries.items():
        relevant = {DOC_PREFIX + d for d, r in corpus.qrels[qid].items() if r > 0}
        returned = raw.query(semantic_phrase(text), return_documents=False).fragments
        ndcg["none"].append(ranked(returned, relevant))
        for name, graph in graphs.items():
            found = graph.query(semantic_phrase(text), return_documents=False).fragments
            ndcg[name].append(ranked(found, relevant))
            kept = {f.fragmentid for f in found}
            for f in returned:
                key = "relevant" if f.documentid in relevant else "non_relevant"
                counts[name][key] += 1
                counts[name][key + "_dropped"] += f.fragmentid not in kept
    out: dict[str, dict[str, float]] = {"none": {"ndcg@10": float(np.mean(ndcg["none"]))}}
    for name, c in counts.items():
        out[name] = {"non_relevant_dropped": c["non_relevant_dropped"] / c["non_relevant"],
                     "relevant_dropped": c["relevant_dropped"] / c["relevant"],
                     "ndcg@10": float(np.mean(ndcg[name]))}
    return out


def absent_topics(calibration: Calibration, settings: Settings) -> dict[str, Any]:
    """Best calibrated score (and gate) of absent and present phrases on the sample corpus,
    read as the search reads a phrase: one background over every vector source's candidates
    (chapters, paragraphs, summaries), their sizes added; a phrase whose language (detected
    among every language with an analyzer) no sample document is written in is ``foreign``
    when that can change its gate (``Calibration.language_matters``)."""
    from thalabus_graph import languages
    from thalabus_graph.demo import SAMPLE
    from thalabus_graph.embeddings import embedder_from_settings

    docs = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    texts: dict[str, list[str]] = {"chapters": [], "paragraphs": [], "summaries": []}
    for d in docs:
        for chapter in d.get("chapters", []):
            texts["chapters"].append(chapter)
            texts["paragraphs"] += [p.strip() for p in chapter.split("\n\n") if p.strip()]
        texts["summaries"] += d.get("summaries", [])
    embedder = embedder_from_settings(settings)
    vectors = np.vstack([np.asarray(embedder.embed_passages(v)) for v in texts.values() if v])
    found = [lexical_words(t) for v in texts.values() for t in v]
    phrases = [(p[1], False) for p in ABSENT] + [(p[1], True) for p in PRESENT]
    queries = np.asarray(embedder.embed_queries([p for p, _ in phrases]))
    reads_share = calibration.gate is not None and calibration.gate.share_slope is not None
    held = {languages.language_of(d.get("language")) for d in docs}
    out: dict[str, Any] = {}
    for (phrase, present), q in zip(phrases, queries, strict=True):
        sims = vectors @ q
        top = np.argsort(-sims, kind="stable")[: settings.top_n_paragraphs]
        cos = sims[top].tolist()
        share = share_of(lexical_words(phrase), (found[j] for j in top)) if reads_share else None
        bg = calibration.background(cos, len(vectors), share)
        language = None
        if calibration.language_matters(bg):
            language = languages.detect(phrase, sorted(h for h in held if h),
                                        others=languages.EVERY).language
            bg = dataclasses.replace(bg, foreign=language not in held)
        best = max(calibration.score(DEFAULT_SOURCE, c, bg) for c in cos)
        out[phrase] = {"absent": not present, "best_cosine": cos[0], "share": share,
                       "language": language, "foreign": bg.foreign,
                       "best": best, "gate": calibration.gate_of(bg),
                       "returns_nothing": best < settings.min_score}
    return out


def reliability_report(data: Path, path: Path, settings: Settings) -> None:
    """The shipped model's reliability on held-out queries of both sets (``--reliability``):
    drawn to ``path``, its numbers to ``path`` with ``.json``."""
    shipped = load(SHIPPED / f"{settings.embedder_model}.json")
    reads_share = bool(shipped.gate and shipped.gate.share_slope is not None)
    sets = [dataclasses.replace(
        labelled_set(data / name / "corpus.jsonl", data / name / "queries.jsonl",
                     data / name / "qrels" / f"{split}.tsv", data / name / "embeddings",
                     settings, shares=reads_share), name=f"{name} ({split})")
        for name, split in SETS]
    report = held_out_report(settings.embedder_model, sets, shipped)
    draw(report, path)
    write_json(path.with_suffix(".json"), report)
    for name, ece in report["ece_per_set"].items():
        print(f"{name}: ECE {ece:.4f}")
    print(f"ECE {report['ece']:.4f} on {report['candidates']} held-out candidates of "
          f"{', '.join(f'{k} {v}' for k, v in report['queries'].items())} queries; wrote "
          f"{path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--json", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--write", action="store_true", help="store the shipped calibration")
    parser.add_argument("--fusion", action="store_true",
                        help="also measure the fused phrase (BM25 computed here)")
    parser.add_argument("--uri", default=None,
                        help="also measure through the engine on this Neo4j (WIPES it)")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="with --uri, also measure this calibration file")
    parser.add_argument("--gate-margin", type=float, default=0.0,
                        help="move the zero-loss gate this much further along its logit (more "
                        "lenient): for a loss the offline lists cannot show (the engine's "
                        "fusion, measured with --uri)")
    parser.add_argument("--cosine-gate", action="store_true",
                        help="fit the gate on the best cosine alone (no lexical share)")
    parser.add_argument("--sample", action="store_true",
                        help="also score absent topics on the sample corpus (local e5 model)")
    parser.add_argument("--reliability", type=Path, default=None, metavar="FILE.png",
                        help="only measure the reliability on held-out queries: draw it and "
                        "write its numbers to FILE.json")
    args = parser.parse_args()
    settings = Settings()
    if args.reliability is not None:
        reliability_report(args.data, args.reliability, settings)
        return
    sets, totals = [], []
    for name, split in SETS:
        folder = args.data / name
        labelled = labelled_set(folder / "corpus.jsonl", folder / "queries.jsonl",
                                folder / "qrels" / f"{split}.tsv", folder / "embeddings",
                                settings, shares=not args.cosine_gate)
        sets.append(dataclasses.replace(labelled, name=f"{name} ({split})"))
        judged = read_qrels(folder / "qrels" / f"{split}.tsv")
        ids = json.loads((folder / "embeddings" / "queries.ids.json").read_text())
        totals.append([len(judged[q]) for q in ids if q in judged])
    absent = absent_topics_of_xquad(args.data / "xquad-r", "dev", settings)
    if args.cosine_gate:
        absent = [dataclasses.replace(a, shares=None) for a in absent]
    fitted = fit_gate([gate_features(s) for s in sets], [gate_features(a) for a in absent])
    calibration = fit(settings.embedder_model, {"default": sets})
    present_sweeps = [Sweep.of(s, calibration, t) for s, t in zip(sets, totals, strict=True)]
    absent_sweeps = [Sweep.of(a, calibration, None) for a in absent]
    gate, sweep = zero_loss_gate(fitted, present_sweeps, absent_sweeps, settings.min_score)
    chosen = next(r for r in sweep if r["shift"] == round(gate.intercept - fitted.intercept, 2))
    gate = gate.shifted(args.gate_margin)
    foreign_present, foreign_totals, foreign_absent = other_language_sets(
        args.data / "xquad-r", "dev", settings)
    foreign_gate = fit_gate([best_hits(foreign_present)], [best_hits(a) for a in foreign_absent])
    calibration = dataclasses.replace(calibration, gate=gate, foreign_gate=foreign_gate)
    print(f"gate fitted {fitted.to_dict()}; zero-loss shift {chosen['shift']:+.2f}, "
          f"margin {args.gate_margin:+.2f}: "
          f"{gate.to_dict()}, 0.5 at cosine {gate.midpoint_at(0.0):.3f} (no word shared) .. "
          f"{gate.midpoint_at(1.0):.3f} (every word); absent silenced "
          f"{chosen['silenced']:.1%}; index-scale nDCG@10 " + ", ".join(
              f"{s.name} {s.index_ndcg():.4f}" for s in present_sweeps))
    results: dict[str, Any] = {"model": settings.embedder_model,
                               "top_n": settings.top_n_chapters,
                               "calibration": calibration.to_dict()["sources"],
                               "gate": {"fitted": fitted.to_dict(), "shipped": gate.to_dict(),
                                        "margin": args.gate_margin, "sweep": sweep},
                               "foreign_gate": {"fitted": foreign_gate.to_dict()}}
    print(f"foreign gate fitted (no shift) {foreign_gate.to_dict()}, 0.5 at cosine "
          f"{foreign_gate.midpoint:.3f}")
    for data, counts in ((foreign_present, foreign_totals), *((a, None) for a in foreign_absent)):
        rates = foreign_rates(calibration, data, counts, settings.min_score)
        results["foreign_gate"][data.name] = rates
        print(f"{data.name}: emptied {rates['held']['emptied']:.1%} by the gate alone, "
              f"{rates['foreign']['emptied']:.1%} as a phrase in a language the graph lacks"
              + (f"; nDCG@10 {rates['held']['ndcg@10']:.4f} -> "
                 f"{rates['foreign']['ndcg@10']:.4f}" if counts is not None else ""))
    for labelled, total in zip(sets, totals, strict=True):
        results[labelled.name] = measure(labelled, calibration, settings, total)
        r = results[labelled.name]
        print(f"{labelled.name}: MIN_SCORE drops {r['min_score']['non_relevant_dropped']:.1%} "
              f"non-relevant / {r['min_score']['relevant_dropped']:.1%} relevant; "
              "MIN_RERANKING_SCORE_DOC drops "
              f"{r['min_reranking_score_doc']['non_relevant_dropped']:.1%} / "
              f"{r['min_reranking_score_doc']['relevant_dropped']:.1%}; nDCG@10 "
              f"{r['ndcg@10']['before']:.4f} -> {r['ndcg@10']['after_min_score']:.4f}; "
              "best cosine-only threshold drops "
              f"{r['best_cosine_only']['relevant_dropped']:.1%} relevant at cos "
              f"{r['best_cosine_only']['threshold_cosine']:.3f}")
    for data in (*sets, *absent):
        results["gate"][data.name] = rates = gate_rates(calibration, data)
        print(f"gate on {data.name}: {rates['emptied']:.1%} of the phrases emptied, "
              f"median gate {rates['median_gate']:.3f}")
    common = max(results[s.name]["best_cosine_only"]["threshold_cosine"] for s in sets)
    for labelled in sets:
        cos = np.concatenate(list(labelled.cosines))
        rel = np.concatenate(list(labelled.relevant))
        dropped = float((cos[rel] < common).mean())
        results[labelled.name]["one_cosine_threshold_for_all_sets"] = {
            "threshold_cosine": common, "relevant_dropped": dropped}
        print(f"{labelled.name}: one cosine threshold for every set ({common:.3f}) drops "
              f"{dropped:.1%} of the relevant candidates")
    if args.fusion:
        for (name, split), labelled in zip(SETS, sets, strict=True):
            fused = fused_quality(args.data / name, split, calibration, settings)
            results[labelled.name]["fused"] = fused
            rates = fused["min_score_on_the_fused_list"]
            print(f"{labelled.name} fused: nDCG@10 " + ", ".join(
                f"{k} {v:.4f}" for k, v in fused["ndcg@10"].items())
                + f"; MIN_SCORE drops {rates['non_relevant_dropped']:.1%} non-relevant / "
                f"{rates['relevant_dropped']:.1%} relevant of the fused list")
    if args.uri:
        files = {"shipped": ""}
        if args.baseline:
            files["baseline"] = str(args.baseline)
        for (name, split), labelled in zip(SETS, sets, strict=True):
            engine = engine_drop_rates(args.uri, args.data / name, split, files)
            results[labelled.name]["engine_min_score"] = engine
            print(f"{labelled.name} through the engine: nDCG@10 on the index scale "
                  f"{engine['none']['ndcg@10']:.4f}")
            for scale, rates in engine.items():
                if scale != "none":
                    print(f"  {scale}: MIN_SCORE drops {rates['non_relevant_dropped']:.1%} of "
                          f"the non-relevant and {rates['relevant_dropped']:.1%} of the "
                          f"relevant fragments returned; nDCG@10 {rates['ndcg@10']:.4f}")
    if args.sample:
        results["sample_corpus"] = absent_topics(calibration, settings)
        for phrase, r in results["sample_corpus"].items():
            print(f"{'absent ' if r['absent'] else 'present'} {phrase!r}: best cosine "
                  f"{r['best_cosine']:.3f}, share {r['share']}, gate {r['gate']:.3f}"
                  f"{' (foreign: ' + str(r['language']) + ')' if r['foreign'] else ''}, "
                  f"best score {r['best']:.3f}; "
                  f"returns nothing: {r['returns_nothing']}")
        found = results["sample_corpus"].values()
        print(f"absent topics returning nothing: "
              f"{sum(r['returns_nothing'] for r in found if r['absent'])}/{len(ABSENT)}; "
              "present topics returning something: "
              f"{sum(not r['returns_nothing'] for r in found if not r['absent'])}/{len(PRESENT)}")
    measured = {name: {k: results[name][k] for k in ("min_score", "min_reranking_score_doc")}
                for name in (s.name for s in sets)}
    shipped = dataclasses.replace(calibration, measured=measured)
    if args.write:
        SHIPPED.mkdir(parents=True, exist_ok=True)
        shipped.save(SHIPPED / f"{settings.embedder_model}.json")
    assert all(math.isfinite(m.slope) for m in shipped.sources.values())
    write_json(args.json, results)


if __name__ == "__main__":
    main()
