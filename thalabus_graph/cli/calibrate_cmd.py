"""``thalabus-graph calibrate``: fit the semantic-score calibration on labelled data.

Reads one or more labelled sets in BEIR's layout (a corpus, its queries and their relevance
judgments), embeds them with the configured embedder (or reads precomputed vectors), takes
each query's ``TOP_N_CHAPTERS`` candidates as a search would, fits the map of
``thalabus_graph.scoring.fitting`` and writes the calibration file that
``THALABUS_CALIBRATION_FILE`` points at. The phrase gate (what the model gives a topic the
corpus lacks) is the model's own: the file keeps the shipped ones (the gate and the gate of a
phrase in a language the graph lacks), and when the gate reads the
lexical share of a phrase's words among its candidates, the corpus and query texts are read so
the drop rates it reports are measured with it. Needs no Neo4j.

Input is checked before anything is fitted, and a fit that could not score hits apart is not
written: vectors must be finite, non-zero, of one dimension and one row per id; the labelled
files regular files of JSON objects with ids; every set must give ``MIN_CLASS`` relevant and
non-relevant candidates; the map must rise by ``MIN_SPREAD`` over the candidates' evidence.
Each refusal names the file and what to fix (exit 2). ``--report FILE.png`` fits the map on
part of each set's queries and draws its reliability on the others (``held_out_report``).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import stat
from pathlib import Path
from typing import Any

import numpy as np

from thalabus_graph.cli import common
from thalabus_graph.cli.calibrate_plot import draw, pyplot
from thalabus_graph.errors import ConfigurationError
from thalabus_graph.scoring.calibration import DEFAULT_SOURCE, Calibration, at_prior, shipped
from thalabus_graph.scoring.fitting import Labelled, candidates, evidences, fit, prior_odds_of
from thalabus_graph.scoring.reliability import DEFAULT_BINS, balanced_weights, reliability
from thalabus_graph.settings import Settings

EXAMPLES = """\
examples:
  thalabus-graph calibrate --corpus corpus.jsonl --queries queries.jsonl \\
      --qrels qrels/train.tsv --out my-calibration.json
  THALABUS_CALIBRATION_FILE=my-calibration.json thalabus-graph query '"..."'
  thalabus-graph calibrate --corpus corpus.jsonl --queries queries.jsonl \\
      --qrels qrels/train.tsv --report reliability.png   # ECE on 30% held-out queries

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
    parser.add_argument("--out", type=Path, default=None, help="calibration file to write")
    parser.add_argument("--report", type=Path, default=None, metavar="FILE.png",
                        help="draw the reliability diagram of a fit on part of the queries, "
                        "read on the others, and write its numbers (ECE) to FILE.json "
                        "(needs matplotlib: the plots extra)")
    parser.add_argument("--held-out", type=common.finite_float(0.0, 1.0), default=HELD_OUT,
                        help=f"share of each set's queries --report holds out (default "
                        f"{HELD_OUT})")
    parser.add_argument("--seed", type=int, default=SEED,
                        help="seed of the held-out draw (default %(default)s)")
    parser.add_argument("--model", default=None,
                        help="embedding model name recorded in the file (default: "
                        "THALABUS_EMBEDDER_MODEL)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    common.add_logging_options(parser)
    parser.set_defaults(handler=handle)


HELD_OUT = 0.3
"""Share of each labelled set's queries ``--report`` holds out of the fit."""
SEED = 0
"""Seed of the held-out draw (``--seed``): the same queries every run."""
SEED_FLOORS = {"min_score": 0.10, "min_reranking_score_doc": 0.05}
"""The seed's score floors, operating points on a score at even odds: read at a calibration's
prior they are the settings that drop what they drop (the defaults are the shipped model's)."""
MIN_CLASS = 10
"""Fewest relevant, and fewest non-relevant, candidates a labelled set must give the fit:
fewer cannot place a map."""
MIN_SPREAD = 0.1
"""Smallest rise of the fitted map's probability from the 1st to the 99th percentile of the
candidates' tail evidence: a flatter map scores every hit about the same (a degenerate fit,
as from constant vectors), which would make ``MIN_SCORE`` keep all or nothing."""


def regular(path: Path) -> Path:
    """``path``, when it names a regular file; else a ``ConfigurationError``: a device such
    as ``/dev/zero`` has no end to read and a FIFO blocks its reader."""
    try:
        info = path.stat()
    except OSError as exc:
        raise ConfigurationError(f"cannot read {path}: {exc}") from exc
    if not stat.S_ISREG(info.st_mode):
        raise ConfigurationError(f"{path} is not a regular file; give the file itself")
    return path


def read_jsonl(path: Path, *, text: bool = False) -> list[dict[str, Any]]:
    """The JSON objects of a JSON Lines file (blank lines skipped), each with an ``_id`` (a
    string or a whole number) and, with ``text``, a string ``text``; anything else, or a
    file without one record, is a ``ConfigurationError`` naming the file and line."""
    records: list[dict[str, Any]] = []
    try:
        with regular(path).open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                record = json.loads(line)
                ident = record.get("_id") if isinstance(record, dict) else None
                if isinstance(ident, bool) or not isinstance(ident, str | int):
                    raise ConfigurationError(f"{path} line {number}: not a JSON object with "
                                             "an \"_id\" (a string or a whole number)")
                if text and not isinstance(record.get("text"), str):
                    raise ConfigurationError(f"{path} line {number}: a query needs a string "
                                             "\"text\"")
                records.append(record)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"cannot read {path}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise ConfigurationError(f"{path} is not JSON Lines: {exc}") from exc
    if not records:
        raise ConfigurationError(f"{path} holds no records (one JSON object per line)")
    return records


def read_qrels(path: Path) -> dict[str, set[str]]:
    """query id -> the corpus ids judged relevant (score > 0)."""
    try:
        with regular(path).open(encoding="utf-8", newline="") as handle:
            rows = list(csv.reader(handle, delimiter="\t"))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ConfigurationError(f"cannot read {path}: {exc}") from exc
    out: dict[str, set[str]] = {}
    for row in rows[1:]:
        if len(row) >= 3 and row[2].strip().lstrip("-").isdigit() and int(row[2]) > 0:
            out.setdefault(row[0], set()).add(row[1])
    return out


def _vectors(folder: Path, kind: str) -> tuple[list[str], np.ndarray[Any, Any]]:
    """The ids and the rows of ``kind`` vectors in ``folder``, checked (``_checked``).

    The ``.npy`` file is mapped, not read: its header declares the array's shape, and a
    header declaring more rows than the file holds is refused as unreadable before any
    memory is set aside for them (a read would allocate the declared size first)."""
    try:
        ids = json.loads(regular(folder / f"{kind}.ids.json").read_text(encoding="utf-8"))
        vectors = np.load(regular(folder / f"{kind}.npy"), mmap_mode="r")
    except (OSError, ValueError, EOFError) as exc:
        raise ConfigurationError(f"cannot read {kind} vectors in {folder}: {exc}") from exc
    if not isinstance(ids, list) or not all(
            isinstance(i, str | int) and not isinstance(i, bool) for i in ids):
        raise ConfigurationError(f"{folder / f'{kind}.ids.json'} must be a JSON list of ids "
                                 "(strings or whole numbers)")
    return [str(i) for i in ids], _checked(vectors, f"{folder / f'{kind}.npy'}",
                                           [str(i) for i in ids])


def _checked(vectors: Any, where: str, ids: list[str]) -> np.ndarray[Any, Any]:
    """``vectors`` as a float matrix with one finite, non-zero row per id, else a
    ``ConfigurationError`` naming ``where`` and the first bad row's id: a zero or non-finite
    vector has no direction, so its cosines would be constant or NaN and the fit degenerate."""
    array = np.asarray(vectors)
    if array.dtype.kind not in "iuf":
        raise ConfigurationError(f"{where}: vectors must be numbers (found {array.dtype})")
    if array.ndim != 2 or array.shape[0] == 0 or array.shape[1] == 0:
        raise ConfigurationError(f"{where}: vectors must be a non-empty matrix, one row per "
                                 f"id (found shape {array.shape})")
    if array.shape[0] != len(ids):
        raise ConfigurationError(f"{where}: {array.shape[0]} rows for {len(ids)} ids; the "
                                 "id list names the rows in order")
    if len(set(ids)) != len(ids):
        raise ConfigurationError(f"{where}: an id names more than one row")
    array = array.astype(np.float64)
    bad = ~np.isfinite(array).all(axis=1)
    if bad.any():
        raise ConfigurationError(f"{where}: the vector of {ids[int(np.argmax(bad))]!r} holds "
                                 f"NaN or infinity ({int(bad.sum())} such rows)")
    zero = ~(np.abs(array) > 0).any(axis=1)
    if zero.any():
        raise ConfigurationError(f"{where}: the vector of {ids[int(np.argmax(zero))]!r} is all "
                                 f"zeros ({int(zero.sum())} such rows); it has no direction to "
                                 "compare")
    return array


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
    all_asked = read_jsonl(queries, text=True) if embeddings is None or shares else []
    if embeddings is not None:
        doc_ids, doc_vectors = _vectors(embeddings, "corpus")
        query_ids, query_vectors = _vectors(embeddings, "queries")
    else:
        from thalabus_graph.embeddings import embedder_from_settings

        embedder = embedder_from_settings(settings)
        doc_ids = [str(d["_id"]) for d in docs]
        doc_vectors = _checked(embedder.embed_passages([_passage(d) for d in docs]),
                               f"the embedding of {corpus}", doc_ids)
        asked = [q for q in all_asked if str(q["_id"]) in judged]
        query_ids = [str(q["_id"]) for q in asked]
        if not asked:
            raise ConfigurationError(f"no query of {queries} is judged in {qrels}")
        query_vectors = _checked(embedder.embed_queries([str(q["text"]) for q in asked]),
                                 f"the embedding of {queries}", query_ids)
    if doc_vectors.shape[1] != query_vectors.shape[1]:
        raise ConfigurationError(f"the corpus vectors of {corpus} have {doc_vectors.shape[1]} "
                                 f"dimensions and the query vectors {query_vectors.shape[1]}: "
                                 "embed both with the same model")
    row_of = {d: i for i, d in enumerate(doc_ids)}
    keep = [i for i, q in enumerate(query_ids) if q in judged]
    if not keep:
        raise ConfigurationError(f"no query of {queries} has a relevant document in {qrels}")
    relevant = [{row_of[d] for d in judged[query_ids[i]] if d in row_of} for i in keep]
    if not any(relevant):
        raise ConfigurationError(f"no document {qrels} judges relevant is in {corpus} (its "
                                 "corpus ids do not match the corpus's _id values)")
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


def fit_checked(model: str, sets: list[Labelled], known: Calibration | None) -> Calibration:
    """``fitting.fit`` of the ``default`` map on ``sets`` with the shipped gates of
    ``model`` (``known``), refused (``ConfigurationError``) when a set gives fewer than
    ``MIN_CLASS`` relevant or non-relevant candidates or when the map comes out near-constant
    over the candidates' evidence (``MIN_SPREAD``)."""
    for labelled in sets:
        labels = labelled.labels
        n_rel, n_non = int(labels.sum()), int((~labels).sum())
        if n_rel < MIN_CLASS or n_non < MIN_CLASS:
            raise ConfigurationError(
                f"{labelled.name}: {n_rel} relevant and {n_non} non-relevant candidates among "
                f"the top {labelled.size and max((len(c) for c in labelled.cosines), default=0)}"
                f" of its {len(labelled.cosines)} queries; the fit needs at least {MIN_CLASS} "
                "of each (judge more queries, or check that the qrels ids match the corpus)")
    calibration = fit(model, {DEFAULT_SOURCE: sets}, gate=known.gate if known else None,
                      foreign_gate=known.foreign_gate if known else None)
    feats = np.concatenate([evidences(d, calibration.skip)[0] for d in sets])
    low, high = (float(x) for x in np.quantile(feats, [0.01, 0.99]))
    mapped = calibration.map_for(DEFAULT_SOURCE)
    rise = mapped.probability(high) - mapped.probability(low)
    if not rise >= MIN_SPREAD:
        raise ConfigurationError(
            f"the fitted map is near-constant (slope {mapped.slope:.3g}): from the 1st to the "
            f"99th percentile of the candidates' evidence its probability rises by {rise:.3g} "
            f"(at least {MIN_SPREAD} needed), so every hit would score about the same; check "
            "that the vectors differ between queries and that the relevant documents stand out")
    return calibration


def split(labelled: Labelled, held_out: float, seed: int) -> tuple[Labelled, Labelled]:
    """``labelled``'s queries in two parts, (fit, held out), the held-out one a share
    ``held_out`` of the queries drawn at random with ``seed`` (the same for every run)."""
    n = len(labelled.cosines)
    order = np.random.default_rng(seed).permutation(n)
    n_held = min(max(1, round(held_out * n)), n - 1)
    if n < 2:
        raise ConfigurationError(f"{labelled.name}: {n} query cannot be split into a fitted "
                                 "and a held-out part")

    def part(rows: np.ndarray[Any, Any], suffix: str) -> Labelled:
        picked = sorted(int(i) for i in rows)
        return Labelled(f"{labelled.name} {suffix}", [labelled.cosines[i] for i in picked],
                        [labelled.relevant[i] for i in picked], labelled.size,
                        None if labelled.shares is None
                        else [labelled.shares[i] for i in picked])
    return part(order[n_held:], "fit part"), part(order[:n_held], "held out")


def scores_of(calibration: Calibration, labelled: Labelled) -> np.ndarray[Any, Any]:
    """The calibrated scores of every candidate of ``labelled`` (its lexical shares read
    when known), in the order of ``labelled.relevant``."""
    shares = (list(labelled.shares) if labelled.shares is not None
              else [None] * len(labelled.cosines))
    return np.asarray(np.concatenate(
        [calibration.scores(DEFAULT_SOURCE, list(c), labelled.size, share)
         for c, share in zip(labelled.cosines, shares, strict=True)]), dtype=np.float64)


def held_out_report(model: str, sets: list[Labelled], known: Calibration | None,
                    held_out: float = HELD_OUT, seed: int = SEED,
                    bins: int = DEFAULT_BINS) -> dict[str, Any]:
    """The calibration's reliability on a held-out split: the map fitted (``fit_checked``) on
    each set's fit part, its scores read on the held-out queries' candidates at the fit
    part's prior odds (``reliability.balanced_weights``: the odds a score is read at,
    ``fitting.fit_reading``; every set weighs the same) and their ECE, over all sets and per
    set (and, for comparison, at each set's own share of relevant candidates). The phrase
    gates are the shipped ones (``known``)."""
    parts = [split(labelled, held_out, seed) for labelled in sets]
    calibration = fit_checked(model, [fitted for fitted, _ in parts], known)
    scores = [scores_of(calibration, held) for _, held in parts]
    labels = [np.concatenate(list(held.relevant)) for _, held in parts]
    odds = prior_odds_of([fitted for fitted, _ in parts])
    found = reliability(np.concatenate(scores), np.concatenate(labels),
                        balanced_weights(labels, odds), bins)
    per_set = {held.name: reliability(s, y, balanced_weights([y], odds), bins).ece
               for (_, held), s, y in zip(parts, scores, labels, strict=True)}
    return {"model": model, "held_out": held_out, "seed": seed, "bins": bins,
            "prior_odds": odds,
            "weights": f"prior odds {odds:.5f} (one relevant candidate in "
                       f"{1 + 1 / odds:.0f}) within each set, every set the same",
            "queries": {held.name: len(held.cosines) for _, held in parts}
            | {fitted.name: len(fitted.cosines) for fitted, _ in parts},
            "candidates": int(sum(len(y) for y in labels)),
            "map": {"intercept": calibration.map_for(DEFAULT_SOURCE).intercept,
                    "slope": calibration.map_for(DEFAULT_SOURCE).slope},
            "gate": "shipped" if calibration.gate else None,
            "ece": found.ece, "ece_per_set": per_set, "reliability": found.to_dict(),
            "ece_at_each_set_s_prior": {
                held.name: reliability(s, y, bins=bins).ece
                for (_, held), s, y in zip(parts, scores, labels, strict=True)}}


def handle(args: argparse.Namespace) -> int:
    """Fit, report the drop rates at MIN_SCORE and MIN_RERANKING_SCORE_DOC, write the file;
    with ``--report``, also the reliability of a fit on a held-out split."""
    embeddings = _checked_arguments(args)
    settings = Settings.from_env()
    model = args.model or settings.embedder_model
    known = shipped(model)
    # the drop rates are measured with the gate the file keeps: with its lexical share when
    # it reads one (the texts of the corpus and the queries are read for it)
    reads_share = bool(known and known.gate and known.gate.share_slope is not None)
    sets = [labelled_set(c, q, r, e, settings, shares=reads_share)
            for c, q, r, e in zip(args.corpus, args.queries, args.qrels, embeddings,
                                  strict=True)]
    output: dict[str, Any] = {}
    lines: list[str] = []
    if args.out is not None:
        output, lines = _write_calibration(args.out, model, sets, known, settings)
    if args.report is not None:
        output["reliability"], report_lines = _write_report(args, model, sets, known)
        lines += report_lines
    if args.json:
        common.emit_json(output)
    else:
        print("\n".join(lines))
    return 0


def _checked_arguments(args: argparse.Namespace) -> list[Path | None]:
    """The ``--embeddings`` folder of each labelled set (None where not given), after the
    checks of the arguments that need no file: one of each flag per set, something to write,
    and a report's file kind, share and seed. A report needs the plots extra, said before any
    fit."""
    n = len(args.corpus)
    embeddings: list[Path | None] = args.embeddings or [None] * n
    if not len(args.queries) == len(args.qrels) == len(embeddings) == n:
        raise ConfigurationError("give --corpus, --queries, --qrels (and --embeddings) "
                                 "once per labelled set")
    if args.out is None and args.report is None:
        raise ConfigurationError("give --out FILE to write the calibration, --report FILE.png "
                                 "for its reliability on held-out queries, or both")
    if args.report is not None:
        if args.report.suffix.lower() not in (".png", ".svg"):
            raise ConfigurationError(f"--report {args.report}: give a .png or .svg file (the "
                                     "numbers go beside it as .json)")
        if not 0 < args.held_out < 1:
            raise ConfigurationError(f"--held-out {args.held_out}: give a share between 0 "
                                     "and 1")
        if args.seed < 0:
            raise ConfigurationError(f"--seed {args.seed}: give a whole number of 0 or more")
        pyplot()
    return embeddings


def _write_calibration(out: Path, model: str, sets: list[Labelled], known: Calibration | None,
                       settings: Settings) -> tuple[dict[str, Any], list[str]]:
    """Fit on every set, measure the drop rates of both thresholds, write the file to ``out``:
    its JSON form and the lines that say what it drops."""
    calibration = fit_checked(model, sets, known)
    measured: dict[str, Any] = {}
    for labelled in sets:
        scores = scores_of(calibration, labelled)
        measured[labelled.name] = {
            "min_score": drop_rates(labelled, scores, settings.min_score),
            "min_reranking_score_doc": drop_rates(labelled, scores,
                                                  settings.min_reranking_score_doc)}
    calibration = dataclasses.replace(calibration, measured=measured)
    calibration.save(out)
    lines = []
    for name, rates in measured.items():
        for setting, r in rates.items():
            lines.append(f"{name}: {setting} drops {r['non_relevant_dropped']:.1%} of the "
                         f"non-relevant candidates, {r['relevant_dropped']:.1%} of the "
                         "relevant")
    floors = {name: float(f"{at_prior(seed, calibration.reading):.2g}")
              for name, seed in SEED_FLOORS.items()}
    lines.append("the seed's floors read at this data's prior: " + ", ".join(
        f"THALABUS_{name.upper()}={value:g}" for name, value in floors.items())
        + " (each drops what the seed's drops at even odds)")
    gate = ("no phrase gate" if not calibration.gate else "the shipped phrase gates"
            if calibration.foreign_gate else "the shipped phrase gate")
    lines.append(f"wrote {out} (with {gate} of {model})")
    return calibration.to_dict() | {"floors_at_the_prior": floors}, lines


def _write_report(args: argparse.Namespace, model: str, sets: list[Labelled],
                  known: Calibration | None) -> tuple[dict[str, Any], list[str]]:
    """The reliability of a fit on a held-out split, drawn to ``--report`` with its numbers
    beside it as JSON: the report and the lines that sum it up."""
    report = held_out_report(model, sets, known, args.held_out, args.seed)
    draw(report, args.report)
    numbers = args.report.with_suffix(".json")
    try:
        numbers.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(f"cannot write {numbers}: {exc}") from exc
    lines = [f"{name}: ECE {ece:.4f}" for name, ece in report["ece_per_set"].items()]
    lines.append(f"expected calibration error {report['ece']:.4f} on "
                 f"{report['candidates']} held-out candidates ({report['bins']} bins, prior "
                 f"odds {report['prior_odds']:.5f}); wrote {args.report} and {numbers}")
    return report, lines
