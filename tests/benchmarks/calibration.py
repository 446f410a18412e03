"""Fit and measure the semantic-score calibration on the labelled training sets.

Run ``python -m tests.benchmarks.calibration [--data ../shared/data] [--json OUT] [--write]
[--sample]``. Needs no Neo4j: each query's ``TOP_N_CHAPTERS`` candidates by cosine over the
precomputed multilingual-e5-small vectors (SciFact train, xquad-r dev) are what an unfiltered
chapter search returns, one chapter per document.

It measures, per set:

- ``cosine``: the best any single cosine threshold can do (the threshold that drops half of
  the non-relevant candidates, and the share of relevant ones it drops), which is what every
  calibration of the cosine alone can reach;
- ``tail-evidence``: the shipped model (``thalabus_graph.calibration``), fitted on both sets
  (each weighs the same): the share of non-relevant and relevant candidates below
  ``MIN_SCORE`` and ``MIN_RERANKING_SCORE_DOC``, and nDCG@10 of the single phrase before and
  after ``MIN_SCORE`` (the map keeps each query's order, so only dropped hits can change it);
- with ``--sample``: phrases about topics absent from the sample corpus (and present ones), embedded
  with the local e5 model, and the best calibrated score each gets per source.

``--write`` stores the fitted calibration as the package's shipped file for the model.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from tests.benchmarks.report import write_json
from thalabus_graph.calibration import Calibration, Labelled, evidences, fit
from thalabus_graph.cli.calibrate_cmd import labelled_set
from thalabus_graph.settings import Settings

DEFAULT_DATA = Path("../shared/data")
DEFAULT_OUT = Path(".thalabus/benchmarks/calibration.json")
SHIPPED = Path("thalabus_graph/resources/calibration")
SETS = (("scifact", "train"), ("xquad-r", "dev"))
ABSENT = ("chocolate cake recipe", "quantum chromodynamics lattice simulation",
          "stock market prices of semiconductor companies", "how to change a car tyre",
          "football world cup final", "photosynthesis in plants")
PRESENT = ("conversion to Christianity", "deserter from military service",
           "Bob the cat in the snow", "risk of persecution in Iran")


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


def measure(labelled: Labelled, calibration: Calibration, settings: Settings,
            n_relevant: list[int]) -> dict[str, Any]:
    """Drop rates at both thresholds and nDCG@10 before and after MIN_SCORE."""
    feats, rel = evidences(labelled, calibration.skip)
    m = calibration.map_for("default")
    scores = 1.0 / (1.0 + np.exp(-(m.intercept + m.slope * feats)))
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


def absent_topics(calibration: Calibration, settings: Settings) -> dict[str, Any]:
    """Best calibrated score per source of absent and present phrases on the sample corpus."""
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
    vectors = {k: np.asarray(embedder.embed_passages(v)) for k, v in texts.items() if v}
    phrases = (*ABSENT, *PRESENT)
    queries = np.asarray(embedder.embed_queries(list(phrases)))
    out: dict[str, Any] = {}
    for phrase, q in zip(phrases, queries, strict=True):
        best = {}
        for source, v in vectors.items():
            cos = sorted((v @ q).tolist(), reverse=True)[: settings.top_n_chapters]
            best[source] = max(calibration.scores(source, cos, len(v)))
        out[phrase] = {"absent": phrase in ABSENT, "best": best,
                       "returns_nothing": all(s < settings.min_score for s in best.values())}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--json", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--write", action="store_true", help="store the shipped calibration")
    parser.add_argument("--sample", action="store_true",
                        help="also score absent topics on the sample corpus (local e5 model)")
    args = parser.parse_args()
    settings = Settings()
    sets, totals = [], []
    for name, split in SETS:
        folder = args.data / name
        labelled = labelled_set(folder / "corpus.jsonl", folder / "queries.jsonl",
                                folder / "qrels" / f"{split}.tsv", folder / "embeddings",
                                settings)
        sets.append(Labelled(f"{name} ({split})", labelled.cosines, labelled.relevant,
                             labelled.size))
        from thalabus_graph.cli.calibrate_cmd import read_qrels

        judged = read_qrels(folder / "qrels" / f"{split}.tsv")
        ids = json.loads((folder / "embeddings" / "queries.ids.json").read_text())
        totals.append([len(judged[q]) for q in ids if q in judged])
    calibration = fit(settings.embedder_model, {"default": sets})
    results: dict[str, Any] = {"model": settings.embedder_model,
                               "top_n": settings.top_n_chapters,
                               "calibration": calibration.to_dict()["sources"]}
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
    common = max(results[s.name]["best_cosine_only"]["threshold_cosine"] for s in sets)
    for labelled in sets:
        cos = np.concatenate(list(labelled.cosines))
        rel = np.concatenate(list(labelled.relevant))
        dropped = float((cos[rel] < common).mean())
        results[labelled.name]["one_cosine_threshold_for_all_sets"] = {
            "threshold_cosine": common, "relevant_dropped": dropped}
        print(f"{labelled.name}: one cosine threshold for every set ({common:.3f}) drops "
              f"{dropped:.1%} of the relevant candidates")
    if args.sample:
        results["sample_corpus"] = absent_topics(calibration, settings)
        for phrase, r in results["sample_corpus"].items():
            best = ", ".join(f"{s} {v:.3f}" for s, v in r["best"].items())
            print(f"{'absent ' if r['absent'] else 'present'} {phrase!r}: best {best}; "
                  f"returns nothing: {r['returns_nothing']}")
    measured = {name: {k: results[name][k] for k in ("min_score", "min_reranking_score_doc")}
                for name in (s.name for s in sets)}
    shipped = Calibration(calibration.model, calibration.sources, calibration.skip,
                          calibration.fitted_on, measured)
    if args.write:
        SHIPPED.mkdir(parents=True, exist_ok=True)
        shipped.save(SHIPPED / f"{settings.embedder_model}.json")
    assert all(math.isfinite(m.slope) for m in shipped.sources.values())
    write_json(args.json, results)


if __name__ == "__main__":
    main()
