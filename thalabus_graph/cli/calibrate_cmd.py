"""``thalabus-graph calibrate``: fit the semantic-score calibration on labelled data.

Reads one or more labelled sets in BEIR's layout (a corpus, its queries and their relevance
judgments), embeds them with the configured embedder (or reads precomputed vectors), takes
each query's ``TOP_N_CHAPTERS`` candidates as a search would, fits the map of
``thalabus_graph.calibration`` and writes the calibration file that
``THALABUS_CALIBRATION_FILE`` points at. The phrase gate (what the model gives a topic the
corpus lacks) is the model's own: the file keeps the shipped ones (the gate and the gate of a
phrase in a language the graph lacks), and when the gate reads the
lexical share of a phrase's words among its candidates, the corpus and query texts are read so
the drop rates it reports are measured with it. Needs no Neo4j.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np

from thalabus_graph.calibration import DEFAULT_SOURCE, Labelled, candidates, fit, shipped
from thalabus_graph.cli import common
from thalabus_graph.errors import ConfigurationError
from thalabus_graph.settings import Settings

EXAMPLES = """\
examples:
  thalabus-graph calibrate --corpus corpus.jsonl --queries queries.jsonl \\
      --qrels qrels/train.tsv --out my-calibration.json
  THALABUS_CALIBRATION_FILE=my-calibration.json thalabus-graph query '"..."'

  --embeddings DIR reads corpus.npy + corpus.ids.json and queries.npy + queries.ids.json
  (rows follow the id lists) instead of embedding. Repeat --corpus/--queries/--qrels (and
  --embeddings) to fit on several sets; each weighs the same.
"""


def register(subparsers: Any) -> None:
    """Add the ``calibrate`` sub-command."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "calibrate",
        help="fit the semantic-score calibration on your labelled data (no Neo4j needed)",
        description="Fit the map from a semantic hit's cosine to P(relevant) on labelled "
        "queries (BEIR layout: corpus.jsonl with _id/title/text, queries.jsonl with _id/text, "
        "a qrels TSV with query-id, corpus-id, score and a header line) and write it as JSON.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", action="append", required=True, type=Path)
    parser.add_argument("--queries", action="append", required=True, type=Path)
    parser.add_argument("--qrels", action="append", required=True, type=Path)
    parser.add_argument("--embeddings", action="append", type=Path, default=None,
                        help="a folder of precomputed vectors per set (same order)")
    parser.add_argument("--out", required=True, type=Path, help="calibration file to write")
    parser.add_argument("--model", default=None,
                        help="embedding model name recorded in the file (default: "
                        "THALABUS_EMBEDDER_MODEL)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(handler=handle)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSON Lines file (blank lines skipped)."""
    try:
        with path.open(encoding="utf-8") as handle:
            return [json.loads(line) for line in handle if line.strip()]
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigurationError(f"cannot read {path}: {exc}") from exc


def read_qrels(path: Path) -> dict[str, set[str]]:
    """query id -> the corpus ids judged relevant (score > 0)."""
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.reader(handle, delimiter="\t"))
    except OSError as exc:
        raise ConfigurationError(f"cannot read {path}: {exc}") from exc
    out: dict[str, set[str]] = {}
    for row in rows[1:]:
        if len(row) >= 3 and row[2].strip().lstrip("-").isdigit() and int(row[2]) > 0:
            out.setdefault(row[0], set()).add(row[1])
    return out


def _vectors(folder: Path, kind: str) -> tuple[list[str], np.ndarray[Any, Any]]:
    try:
        ids = json.loads((folder / f"{kind}.ids.json").read_text(encoding="utf-8"))
        vectors = np.load(folder / f"{kind}.npy")
    except (OSError, ValueError) as exc:
        raise ConfigurationError(f"cannot read {kind} vectors in {folder}: {exc}") from exc
    return [str(i) for i in ids], np.asarray(vectors, dtype=np.float64)


def _normalised(vectors: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.asarray(vectors / np.where(norms > 0, norms, 1.0), dtype=np.float64)


def labelled_set(corpus: Path, queries: Path, qrels: Path, embeddings: Path | None,
                 settings: Settings, *, shares: bool = False) -> Labelled:
    """One labelled set's candidates, as the search of one source would return them; with
    ``shares`` also every query's lexical share among its candidates' texts (what the phrase
    gate reads beside the best cosine)."""
    judged = read_qrels(qrels)
    # the texts, read once: to embed them, or for the shares (or both)
    docs = read_jsonl(corpus) if embeddings is None or shares else []
    all_asked = read_jsonl(queries) if embeddings is None or shares else []
    if embeddings is not None:
        doc_ids, doc_vectors = _vectors(embeddings, "corpus")
        query_ids, query_vectors = _vectors(embeddings, "queries")
    else:
        from thalabus_graph.embeddings import embedder_from_settings

        embedder = embedder_from_settings(settings)
        doc_ids = [str(d["_id"]) for d in docs]
        doc_vectors = np.asarray(embedder.embed_passages([_passage(d) for d in docs]))
        asked = [q for q in all_asked if str(q["_id"]) in judged]
        query_ids = [str(q["_id"]) for q in asked]
        query_vectors = np.asarray(embedder.embed_queries([str(q["text"]) for q in asked]))
    row_of = {d: i for i, d in enumerate(doc_ids)}
    keep = [i for i, q in enumerate(query_ids) if q in judged]
    if not keep:
        raise ConfigurationError(f"no query of {queries} has a relevant document in {qrels}")
    relevant = [{row_of[d] for d in judged[query_ids[i]] if d in row_of} for i in keep]
    phrases: list[str] | None = None
    texts: list[str] | None = None
    if shares:
        by_id = {str(d["_id"]): d for d in docs}
        asked_text = {str(q["_id"]): str(q["text"]) for q in all_asked}
        texts = [_passage(by_id[d]) if d in by_id else "" for d in doc_ids]
        phrases = [asked_text.get(query_ids[i], "") for i in keep]
    return candidates(corpus.parent.name or str(corpus), _normalised(query_vectors[keep]),
                      _normalised(doc_vectors), relevant, settings.top_n_chapters,
                      phrases=phrases, texts=texts)


def _passage(doc: dict[str, Any]) -> str:
    """The text a corpus line is embedded and searched as: its title and text."""
    return f"{doc.get('title', '')} {doc.get('text', '')}".strip()


def drop_rates(labelled: Labelled, calibration_scores: np.ndarray[Any, Any],
               threshold: float) -> dict[str, float]:
    """Share of the non-relevant and of the relevant candidates scored below ``threshold``."""
    labels = np.concatenate(list(labelled.relevant))
    below = calibration_scores < threshold
    return {"non_relevant_dropped": float(below[~labels].mean()) if (~labels).any() else 0.0,
            "relevant_dropped": float(below[labels].mean()) if labels.any() else 0.0}


def handle(args: argparse.Namespace) -> int:
    """Fit, report the drop rates at MIN_SCORE and MIN_RERANKING_SCORE_DOC, write the file."""
    n = len(args.corpus)
    embeddings = args.embeddings or [None] * n
    if not len(args.queries) == len(args.qrels) == len(embeddings) == n:
        raise ConfigurationError("give --corpus, --queries, --qrels (and --embeddings) "
                                 "once per labelled set")
    settings = Settings.from_env()
    model = args.model or settings.embedder_model
    known = shipped(model)
    # the drop rates are measured with the gate the file keeps: with its lexical share when
    # it reads one (the texts of the corpus and the queries are read for it)
    reads_share = bool(known and known.gate and known.gate.share_slope is not None)
    sets = [labelled_set(c, q, r, e, settings, shares=reads_share)
            for c, q, r, e in zip(args.corpus, args.queries, args.qrels, embeddings,
                                  strict=True)]
    calibration = fit(model, {"default": sets}, gate=known.gate if known else None,
                      foreign_gate=known.foreign_gate if known else None)
    measured: dict[str, Any] = {}
    for labelled in sets:
        shares = (list(labelled.shares) if labelled.shares is not None
                  else [None] * len(labelled.cosines))
        scores = np.concatenate([calibration.scores(DEFAULT_SOURCE, list(c), labelled.size, share)
                                 for c, share in zip(labelled.cosines, shares, strict=True)])
        measured[labelled.name] = {
            "min_score": drop_rates(labelled, scores, settings.min_score),
            "min_reranking_score_doc": drop_rates(labelled, scores,
                                                  settings.min_reranking_score_doc)}
    calibration = dataclasses.replace(calibration, measured=measured)
    calibration.save(args.out)
    if args.json:
        common.emit_json(calibration.to_dict())
    else:
        for name, rates in measured.items():
            for setting, r in rates.items():
                print(f"{name}: {setting} drops {r['non_relevant_dropped']:.1%} of the "
                      f"non-relevant candidates, {r['relevant_dropped']:.1%} of the relevant")
        gate = ("no phrase gate" if not calibration.gate else "the shipped phrase gates"
                if calibration.foreign_gate else "the shipped phrase gate")
        print(f"wrote {args.out} (with {gate} of {model})")
    return 0
