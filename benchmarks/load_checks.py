"""The end checks of the load benchmark: what every worker says it wrote must be in the graph,
exactly. Datasets: member count, every member's weight, lineage (a rerank derives from its
parent) and the rerank flags (a rerank with failed batches is marked degraded, its unscored
members counted). Re-ingested documents: one Document node, exactly the fragments of the
version last written (none lost, none duplicated, none stale, none of another version)."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from typing import Any

from benchmarks.load_workers import expected_fragments
from benchmarks.scale import run_statement
from thalabus_graph import ThalabusGraph
from thalabus_graph.errors import DatasetError

WEIGHT_TOLERANCE = 1e-9


def check_datasets(graph: ThalabusGraph, made: list[dict[str, Any]]) -> dict[str, Any]:
    """Every dataset the rerank workers made, against what their results said."""
    problems: list[str] = []
    checked = reranks = degraded = flagged = 0
    for entry in made:
        checked += 1
        problems += _members(graph, entry["dataset"], entry["members"])
        child = entry.get("child")
        if child is None:
            continue
        reranks += 1
        checked += 1
        problems += _members(graph, child["dataset"], child["members"])
        try:
            info = graph.datasets.get(child["dataset"])
        except DatasetError as exc:
            problems.append(f"{child['dataset']}: {exc}")
            continue
        if info.derived_from != [entry["dataset"]]:
            problems.append(f"{child['dataset']}: derived from {info.derived_from}, not "
                            f"[{entry['dataset']}]")
        stored = (info.reranked, info.reason, info.failures or 0, info.unscored or 0,
                  info.weight_scale)
        said = (child["reranked"], child["reason"], child["failures"], child["unscored"],
                child["weight_scale"])
        if stored != said:
            problems.append(f"{child['dataset']}: stored flags {stored} != result {said}")
        if child["failures"]:
            degraded += 1
            marked = info.reason is not None and info.weight_scale != "reranker"
            flagged += marked
            if not marked:
                problems.append(f"{child['dataset']}: {child['failures']} failed batches but "
                                f"not flagged (reason {info.reason}, {info.weight_scale})")
    return {"datasets_checked": checked, "reranks": reranks, "degraded_reranks": degraded,
            "degraded_flagged": flagged, "problems": problems}


def _members(graph: ThalabusGraph, datasetid: str, weights: dict[str, float]) -> list[str]:
    """Problems of one dataset's members against the weights its result gave."""
    try:
        info = graph.datasets.get(datasetid)
        members = graph.datasets.members(datasetid, include_hidden=True)
    except DatasetError as exc:
        return [f"{datasetid}: {exc}"]
    out: list[str] = []
    if info.members != len(weights) or len(members) != len(weights):
        out.append(f"{datasetid}: {info.members} members recorded, {len(members)} read, "
                   f"{len(weights)} written")
    counts = Counter(m.fragmentid for m in members)
    dupes = [f for f, n in counts.items() if n > 1]
    if dupes:
        out.append(f"{datasetid}: members listed twice: {dupes[:5]}")
    wrong = [m.fragmentid for m in members
             if m.fragmentid not in weights
             or not math.isclose(m.score, weights[m.fragmentid], rel_tol=WEIGHT_TOLERANCE,
                                 abs_tol=WEIGHT_TOLERANCE)]
    if wrong:
        out.append(f"{datasetid}: {len(wrong)} members with a weight other than written, "
                   f"e.g. {wrong[:3]}")
    return out


def check_documents(graph: ThalabusGraph, versions: dict[str, int],
                    uncertain: dict[str, list[int]]) -> dict[str, Any]:
    """Every re-ingested document holds exactly the fragments of its last written version (a
    failed ingest leaves either the version before it or its own, whole)."""
    ids = sorted(versions)
    problems: list[str] = []
    nodes = {r["documentid"]: r["nodes"] for r in run_statement(graph.db, "load_documents",
                                                                 ids=ids)}
    stored: dict[str, list[tuple[str, str]]] = {d: [] for d in ids}
    for r in run_statement(graph.db, "load_fragments", ids=ids):
        stored[r["documentid"]].append((r["fragmentid"], r["text"] or ""))
    lost = duplicated = stale = 0
    for d in ids:
        if nodes.get(d) != 1:
            problems.append(f"{d}: {nodes.get(d)} Document nodes")
        fragments = stored[d]
        counts = Counter(f for f, _ in fragments)
        duplicated += sum(n - 1 for n in counts.values())
        allowed = uncertain.get(d, [versions[d]])
        fits = [v for v in allowed if set(counts) == expected_fragments(d, v)
                and all(f" version {v} " in text for _, text in fragments)]
        if not fits:
            want = expected_fragments(d, versions[d])
            lost += len(want - set(counts))
            stale += len(set(counts) - want)
            problems.append(f"{d}: holds {sorted(counts)[:6]}... (texts of versions "
                            f"{sorted({_version(t) for _, t in fragments})}), expected "
                            f"version {allowed}")
    if duplicated:
        problems.append(f"{duplicated} fragment nodes duplicated")
    return {"documents_checked": len(ids), "fragments_lost": lost,
            "fragments_duplicated": duplicated, "fragments_stale": stale,
            "uncertain_after_failed_ingest": len(uncertain), "problems": problems}


def _version(text: str) -> int | None:
    words = text.split()
    for a, b in itertools.pairwise(words):
        if a == "version" and b.isdigit():
            return int(b)
    return None
