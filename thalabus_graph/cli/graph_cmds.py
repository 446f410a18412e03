"""``thalabus-graph ingest | query | rerank | datasets list|show|hide|unhide``: the engine from
a shell."""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from typing import Any

from thalabus_graph.bounds import parse_for_explain, parse_within_limits
from thalabus_graph.cli import common, output, query_flags
from thalabus_graph.datasets import DatasetInfo
from thalabus_graph.engine import ThalabusGraph
from thalabus_graph.errors import ConfigurationError, IngestError
from thalabus_graph.ingest.lines import check_source_kind
from thalabus_graph.query import Semantic, serialize
from thalabus_graph.rerank import (
    NoReranking,
    Percentile,
    PerQueryNormalised,
    ScoreGap,
    SelectionPolicy,
    ThresholdWithTiers,
    TopK,
)
from thalabus_graph.settings import RERANK_CLAUSES, Settings

POLICIES = ("threshold", "topk", "percentile", "gap", "normalised")
PRINTED_ROWS = 10
"""Rows ``query`` prints without ``--limit`` (``--json`` gives them all)."""
QUOTING_RULE = """\
Run a Thalabus query.

quoting (a bare word is an error):
  "..."        searches by meaning (semantic)
  '...'        searches by text (full-text)
  NAME=VALUE   filters by category
combined with AND, OR, NOT and parentheses; put the whole query in the other
quotes for the shell: '"kitchen floor"' or "'kitchen floor'".
"""
NO_RERANKER = ("note: no reranker is configured (NoReranking): {what}. Set one with "
               "THALABUS_RERANKER_URL=http://HOST:PORT (and THALABUS_RERANKER_PROTOCOL="
               "vllm-score|vllm-rerank|tei|cohere|jina, THALABUS_RERANKER_MODEL).")


def register(subparsers: Any) -> None:
    """Add the engine sub-commands."""
    _register_ingest(subparsers)
    _register_warm_up(subparsers)
    _register_query(subparsers)
    _register_explain(subparsers)
    _register_rerank(subparsers)
    _register_datasets(subparsers)


def _register_ingest(subparsers: Any) -> None:
    """``ingest FILE``: documents from a JSON Lines file into the graph."""
    fmt = argparse.RawDescriptionHelpFormatter
    p = subparsers.add_parser(
        "ingest", help="ingest documents from a JSON Lines file", formatter_class=fmt,
        description=textwrap.fill("Ingest documents from a JSON Lines file, one document a line: "
        '{"documentid", "ontology", "title", "language", "categories": {NAME: [values]}, '
        '"chapters", "paragraphs", "summaries", "questions", "keywords", "embeddings"}, any '
        "other key an extra property (a key named like a misspelt field is warned of). A bad "
        "line is reported with its number and skipped; re-ingesting replaces a document.", 79),
        epilog="examples:\n  thalabus-graph ingest corpus.jsonl\n"
               "  thalabus-graph ingest corpus.jsonl --strict --json")
    p.add_argument("file", help="JSON Lines file, one document per line")
    p.add_argument("--strict", action="store_true",
                   help="stop at the first bad line (default: skip and report it)")
    p.add_argument("--no-progress", action="store_true",
                   help="show no progress (default: a bar with total, rate and ETA on a "
                        "terminal, else a line on stderr every few seconds)")
    common.add_common_options(p)
    p.set_defaults(handler=_ingest)


def _register_warm_up(subparsers: Any) -> None:
    """``warm-up``: every query form run once, so Neo4j has planned them before serving."""
    fmt = argparse.RawDescriptionHelpFormatter
    p = subparsers.add_parser(
        "warm-up", help="run every query form once, so the first queries do not wait for "
                        "Neo4j to plan them", formatter_class=fmt,
        description="Run every query form once on the graph's own data (a stored chapter's "
                    "vector and words, its categories), writing nothing. Neo4j plans each "
                    "search statement the first time it sees it, seconds each on a freshly "
                    "started server: run this after `neo4j start`, before serving queries. A "
                    "bulk ingest (1,000+ documents) warms up by itself.",
        epilog="examples:\n  thalabus-graph warm-up\n  thalabus-graph warm-up --json\n"
               "exit codes: 0 ok (also for an empty graph: nothing to run); 1 the warm-up "
               "stopped early or Neo4j is unreachable")
    p.add_argument("--no-progress", action="store_true",
                   help="show no progress (default: a bar with the queries run, rate and ETA "
                        "on a terminal, else a line on stderr every few seconds)")
    common.add_common_options(p)
    p.set_defaults(handler=_warm_up)


def _register_query(subparsers: Any) -> None:
    """``query TEXT``: run a query and print its documents or fragments."""
    fmt = argparse.RawDescriptionHelpFormatter
    p = subparsers.add_parser(
        "query", help="run a Thalabus query", formatter_class=fmt,
        description=QUOTING_RULE,
        epilog="examples:\n"
               "  thalabus-graph query '\"how do I clean a kitchen floor\"'   # by meaning\n"
               "  thalabus-graph query \"'kitchen floor'\"                      # by text\n"
               "  thalabus-graph query '\"asylum seeker\" AND COUNTRY_OF_ORIGIN=IQ'\n"
               "  thalabus-graph query '\"kitchen floor\" OR '\"'\"'cleanup'\"'\"'' --fragments\n"
               "  thalabus-graph query 'NOT DECISION=granted' --ontology asylum --dataset\n"
               "  thalabus-graph query '\"cat\"' --profile --json")
    p.add_argument("text", help="the query (quote it for the shell)")
    query_flags.add_scope(p)
    p.add_argument("--fragments", action="store_true", help="show fragments, not documents")
    p.add_argument("--rag", action="store_true", help="the fast path (rag_fragments)")
    p.add_argument("--dataset", action="store_true", help="store the result as a dataset")
    p.add_argument("--session", default="default", help="dataset session name")
    p.add_argument("--rerank", action="store_true", help="rerank each branch (needs a reranker)")
    p.add_argument("--profile", action="store_true", help="show the executed plan with timings")
    p.add_argument("--limit", type=int, default=None, metavar="N",
                   help="the results wanted: the search's pools are sized to N and N are "
                        "returned (default: the configured pools, 10 rows printed)")
    query_flags.add_context(p)
    query_flags.add_strict_categories(p)
    common.add_common_options(p)
    p.set_defaults(handler=_query)


def _register_explain(subparsers: Any) -> None:
    """``explain TEXT``: the compiled plan of a query, without running it."""
    fmt = argparse.RawDescriptionHelpFormatter
    p = subparsers.add_parser(
        "explain", help="show the compiled plan of a query without running it",
        formatter_class=fmt, description=textwrap.fill(
            "The compiled plan of a query (its steps, the path each search takes, the pools), "
            "without running a search.", 79) + "\n\n" + QUOTING_RULE.split("\n\n", 1)[1],
        epilog="examples:\n  thalabus-graph explain '\"asylum seeker\" AND COUNTRY_OF_ORIGIN=IQ'\n"
               "  thalabus-graph explain 'NOT DECISION=granted' --ontology asylum --json")
    p.add_argument("text", help="the query (quote it for the shell)")
    query_flags.add_scope(p)
    p.add_argument("--limit", type=int, default=None, metavar="N",
                   help="plan with the pools sized to N results, as query --limit N runs")
    query_flags.add_strict_categories(p)
    common.add_common_options(p)
    p.set_defaults(handler=_explain)


def _register_rerank(subparsers: Any) -> None:
    """``rerank DATASET``: a dataset reranked in rounds into a new one."""
    fmt = argparse.RawDescriptionHelpFormatter
    p = subparsers.add_parser(
        "rerank", help="rerank a dataset into {session}#rerank_N", formatter_class=fmt,
        description=textwrap.fill("Rerank a dataset's members with the configured reranker "
        "(THALABUS_RERANKER_URL) into a new dataset {session}#rerank_N; a failing reranker "
        "degrades to the retrieval order, flagged on the new dataset.", 79),
        epilog="examples:\n  thalabus-graph rerank 'default#dataset_1'\n"
               "  THALABUS_RERANKER_URL=http://127.0.0.1:8000 thalabus-graph rerank "
               "'default#dataset_1' --query 'religious conversion'\n"
               "  thalabus-graph rerank 'default#dataset_1' --policy topk --k 20\n"
               "  thalabus-graph rerank 'default#dataset_1' --policy percentile "
               "--percentile 80\n"
               "policies: threshold (default: --threshold, else MIN_RERANKING_SCORE_FRAG, with "
               "the diversity tiers), topk (--k), percentile (--percentile), gap (--min-keep, "
               "--max-keep), normalised (--threshold in [0, 1], default 0.5)")
    p.add_argument("dataset", help="dataset id")
    p.add_argument("--query", default=None, metavar="QUESTION",
                   help="what the reranker is asked, plain text, e.g. 'religious conversion' "
                        "(default: the positive semantic clauses of the dataset's query)")
    p.add_argument("--session", default=None, help="session of the new dataset")
    p.add_argument("--goal", default=None,
                   help="the goal uses the new dataset (in its parent's place if it used that)")
    p.add_argument("--policy", choices=POLICIES, default="threshold",
                   help="selection policy per round (default threshold + tiers)")
    p.add_argument("--threshold", type=common.finite_float(None), default=None,
                   help="threshold: minimum reranker score; normalised: minimum in [0, 1]")
    p.add_argument("--k", type=int, default=10, help="topk: fragments kept per round")
    p.add_argument("--percentile", type=common.finite_float(0.0, 100.0), default=90.0,
                   help="percentile: keep scores at or above this percentile (0-100)")
    p.add_argument("--min-keep", type=int, default=1, help="gap: fewest fragments kept")
    p.add_argument("--max-keep", type=int, default=None, help="gap: most fragments kept")
    p.add_argument("--max-output", type=int, default=None,
                   help="cap on the merged result (default MAX_RERANKING_OUTPUT_FRAG)")
    p.add_argument("--clauses", choices=RERANK_CLAUSES, default=None,
                   help="several semantic clauses: joined (one reranker query, the clauses "
                        "joined by AND) or scored per clause and combined by the AND rule "
                        "geometric (mean) or minimum (default: RERANK_CLAUSES)")
    p.add_argument("--limit", type=int, default=10,
                   help="members of the new dataset printed (default 10; --json lists all)")
    common.add_common_options(p)
    p.set_defaults(handler=_rerank)


def _register_datasets(subparsers: Any) -> None:
    """``datasets list|show|hide|unhide``: read datasets and hide members from their readers."""
    fmt = argparse.RawDescriptionHelpFormatter
    p = subparsers.add_parser(
        "datasets", help="list, show, hide or unhide datasets", formatter_class=fmt,
        epilog="examples:\n  thalabus-graph datasets list\n"
               "  thalabus-graph datasets show 'default#rerank_1' --histogram scores.png\n"
               "  thalabus-graph datasets hide 'default#rerank_1' docid-1003-c2 docid-1004\n"
               "  thalabus-graph datasets unhide 'default#rerank_1' docid-1003-c2")
    sub = p.add_subparsers(dest="datasets_command", required=True, metavar="ACTION")
    q = sub.add_parser("list", help="every dataset", formatter_class=fmt,
                       epilog="examples:\n  thalabus-graph datasets list\n"
                              "  thalabus-graph datasets list --session cli --json")
    q.add_argument("--session", default=None, help="only the datasets of this session")
    common.add_common_options(q)
    q.set_defaults(handler=_datasets_list)
    q = sub.add_parser("show", help="one dataset and its best members", formatter_class=fmt,
                       epilog="examples:\n  thalabus-graph datasets show 'default#dataset_1'\n"
                              "  thalabus-graph datasets show 'default#rerank_1' --hidden "
                              "--histogram scores.png")
    q.add_argument("dataset")
    q.add_argument("--limit", type=int, default=20,
                   help="members printed, best first (default 20)")
    q.add_argument("--hidden", action="store_true", help="include hidden members")
    q.add_argument("--histogram", default=None, metavar="FILE.png",
                   help="plot retrieval weight against reranker weight of a derived dataset "
                        "(needs the [plots] extra: matplotlib)")
    common.add_common_options(q)
    q.set_defaults(handler=_datasets_show)
    for action, hidden in (("hide", True), ("unhide", False)):
        q = sub.add_parser(
            action, help=f"{action} members of one dataset (for its readers only)",
            formatter_class=fmt,
            epilog=f"example:\n  thalabus-graph datasets {action} 'default#rerank_1' "
                   "docid-1003-c2 docid-1004")
        q.add_argument("dataset")
        q.add_argument("members", nargs="+", metavar="FRAGMENT",
                       help="fragment ids (or document ids of category members)")
        common.add_common_options(q)
        q.set_defaults(handler=_datasets_hide, hidden=hidden)

def _print_warnings(warnings: list[dict[str, Any]]) -> None:
    """Category warnings on stderr, one line each (stdout stays the result)."""
    for warning in warnings:
        print(f"warning: {warning['message']}", file=sys.stderr)


SKIPPED_SHOWN = 20
"""Skipped lines printed one by one; the rest are counted (a wrong file skips every line)."""


def _ingest(args: argparse.Namespace) -> int:
    _check_readable(args.file)
    with common.graph(args) as g:
        progress = not (args.no_progress or args.json)
        report = g.ingest(args.file, strict=args.strict, progress=progress)
    if args.json:
        output.emit_json(report.to_dict())
    else:
        d = report.to_dict()
        print(f"ingested {d['documents']} documents, {d['fragments']} fragments in "
              f"{d['seconds']} s ({d['fragments_per_second']} fragments/s); embeddings: "
              f"{d['embeddings_computed']} computed, {d['embeddings_reused']} reused, "
              f"{d['embeddings_supplied']} supplied")
        for e in report.errors[:SKIPPED_SHOWN]:
            print(f"skipped line {e.line_number}: {e.message}", file=sys.stderr)
        if report.errors:
            more = len(report.errors) - SKIPPED_SHOWN
            print(f"skipped {len(report.errors)} lines" + (
                f" ({more} more than shown; --json lists every one)" if more > 0 else ""),
                file=sys.stderr)
        for warning in report.warnings():
            print(f"warning: {warning}", file=sys.stderr)
    if report.errors and not report.documents:
        if not args.json:
            print("error: no line of the file was a document to ingest", file=sys.stderr)
        return common.EXIT_BAD_INPUT
    return common.EXIT_OK


def _warm_up(args: argparse.Namespace) -> int:
    with common.graph(args) as g:
        report = g.warm_up(progress=not (args.no_progress or args.json))
    if args.json:
        output.emit_json(report.to_dict())
    elif report.problem:
        print(f"error: the warm-up stopped after {report.queries} queries: {report.problem}",
              file=sys.stderr)
    elif report.queries == 0:
        print("nothing to warm up: the graph holds no fragment with an embedding")
    else:
        print(f"warmed up: {report.queries} queries in {report.seconds:.1f} s")
    return common.EXIT_FAILURE if report.problem else common.EXIT_OK


def _check_readable(path: str) -> None:
    """Fail with one line (exit 2) before connecting when the input file cannot be read."""
    try:
        with open(path, "rb") as handle:
            check_source_kind(path, os.fstat(handle.fileno()).st_mode, handle.fileno())
    except OSError as exc:
        raise IngestError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _short(text: str | None, width: int = 70) -> str:
    if text is None:
        return "-"
    flat = output.shown(" ".join(text.split()))
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _query(args: argparse.Namespace) -> int:
    settings = Settings.from_env()  # read once: a misspelt variable is warned about once
    parse_within_limits(args.text, settings)  # a malformed query needs no server
    with common.graph(args, settings) as g:
        if args.rerank:
            _say_if_no_reranker(g, "--rerank changes nothing")
        if args.rag:
            result = g.rag_fragments(args.text, ontology_id=args.ontology,
                                     subset_of_datasetids=args.within,
                                     create_dataset=args.dataset, session=args.session,
                                     strict_categories=args.strict_categories,
                                     language=args.language, limit=args.limit,
                                     context=args.context)
        else:
            result = g.query(args.text, ontology_id=args.ontology,
                             subset_of_datasetids=args.within,
                             return_documents=not args.fragments,
                             create_dataset=args.dataset, session=args.session,
                             automatically_rerank=args.rerank, profile=args.profile,
                             strict_categories=args.strict_categories, language=args.language,
                             limit=args.limit, context=args.context)
    _print_warnings([w.to_dict() for w in result.warnings])
    if args.json:
        output.emit_json(result.to_dict())
        return common.EXIT_OK
    rows = PRINTED_ROWS if args.limit is None else args.limit
    if result.documents is not None:
        print(f"{len(result.documents)} documents")
        for d in result.documents[:rows]:
            print(f"  {d.score:7.4f}  {output.shown(d.documentid):<16} {_short(d.title, 60)}")
        _print_unshown(len(result.documents) - rows, "documents")
    else:
        print(f"{len(result.fragments)} fragments")
        for f in result.fragments[:rows]:
            print(f"  {f.score:7.4f}  {output.shown(f.fragmentid):<20} {f.source:<10} "
                  f"{_short(f.text, 50)}")
        _print_unshown(len(result.fragments) - rows, "fragments")
    for datasetid in result.dataset_ids:
        print(f"dataset: {output.shown(datasetid)}")
    if result.plan is not None:
        print(result.plan)  # the same tree as print(result.plan) in Python
    return common.EXIT_OK


def _print_unshown(count: int, what: str) -> None:
    """The line under a table the query's results did not fit in."""
    if count > 0:
        print(f"  ... {count} {what} more (--limit N shows N; --json shows every one)")


def _explain(args: argparse.Namespace) -> int:
    settings = Settings.from_env()  # read once: a misspelt variable is warned about once
    parse_for_explain(args.text, settings)  # a malformed query needs no server
    with common.graph(args, settings) as g:
        plan = g.explain(args.text, ontology_id=args.ontology,
                         subset_of_datasetids=args.within,
                         strict_categories=args.strict_categories, language=args.language,
                         limit=args.limit)
    _print_warnings(plan["warnings"])
    if args.json:
        output.emit_json(plan)
        return common.EXIT_OK
    print(f"query: {plan['query']}")
    pools = ", ".join(f"{name} {n}" for name, n in plan["pools"].items())
    print(f"pools: {pools}" + ("" if plan["limit"] is None
                               else f" (sized to limit {plan['limit']})"))
    for line in output.plan_lines(plan["plan"]):
        print(line)
    return common.EXIT_OK


def _policy(args: argparse.Namespace, settings: Settings) -> SelectionPolicy:
    """The selection policy the ``rerank`` flags ask for."""
    if args.policy == "topk":
        return TopK(args.k)
    if args.policy == "percentile":
        return Percentile(args.percentile)
    if args.policy == "gap":
        return ScoreGap(args.min_keep, args.max_keep)
    if args.policy == "normalised":
        return PerQueryNormalised(0.5 if args.threshold is None else args.threshold)
    base = ThresholdWithTiers.from_settings(settings)
    if args.threshold is None:
        return base
    return ThresholdWithTiers(args.threshold, base.min_output_frag, base.max_output_frag,
                              base.min_output_doc)


def _say_if_no_reranker(graph: ThalabusGraph, what: str) -> None:
    """One line on stderr when the configured reranker is the identity."""
    if isinstance(graph.reranker, NoReranking):
        print(NO_RERANKER.format(what=what), file=sys.stderr)


def _rerank(args: argparse.Namespace) -> int:
    if args.query is not None and not args.query.strip():
        raise ConfigurationError("--query needs a question; it is blank")
    with common.graph(args) as g:
        policy = _policy(args, g.settings)
        if args.max_output is not None and args.max_output < 1:
            raise ConfigurationError("--max-output must be at least 1")
        _say_if_no_reranker(g, "the dataset keeps its retrieval order and weights")
        question = None if args.query is None else serialize(Semantic(args.query.strip()))
        result = g.rerank_dataset(args.dataset, question, session=args.session,
                                  policy=policy, max_output=args.max_output, goal=args.goal,
                                  clauses=args.clauses)
    if args.json:
        output.emit_json(result.to_dict())
        return common.EXIT_OK
    if result.reranked:
        state = "reranked" if result.reason is None else \
            f"reranked, degraded ({result.reason}: {result.unscored} unscored members last)"
    else:
        state = f"order kept ({result.reason})"
    print(f"{output.shown(result.dataset_id)} <- {output.shown(result.parent_id)}: "
          f"{len(result.fragments)} members, "
          f"{state}, {result.rounds} rounds, {result.failures} failures, "
          f"{result.capped} capped, weights on the {result.weight_scale} scale, "
          f"clauses {result.clauses}")
    for f in result.fragments[: args.limit]:
        print(f"  {f.score:9.5f}  {output.shown(f.fragmentid):<20} {_short(f.text, 50)}")
    return common.EXIT_OK


def _datasets_list(args: argparse.Namespace) -> int:
    with common.graph(args) as g:
        rows = g.datasets.list_datasets(args.session)
    if args.json:
        output.emit_json(rows)
        return common.EXIT_OK
    for r in rows:
        parents = output.shown(",".join(r["derived_from"])) or "-"
        print(f"{output.shown(r['datasetid']):<28} {r['members']:>6} members  from {parents:<24} "
              f"{_short(r['query'], 40)}")
    return common.EXIT_OK


def _datasets_show(args: argparse.Namespace) -> int:
    with common.graph(args) as g:
        info = g.datasets.get(args.dataset)
        members = g.datasets.members(args.dataset, include_hidden=args.hidden,
                                     limit=args.limit)
        if args.histogram:
            _histogram(g, info, args.histogram)
    if args.json:
        output.emit_json({"dataset": info.to_dict(), "members": [m.to_dict() for m in members]})
        return common.EXIT_OK
    print(f"{output.shown(info.datasetid)}: {info.members} members ({info.hidden} hidden), "
          f"query {info.query!r}, derived from {info.derived_from or '-'}")
    if info.reranked is not None:
        state = "reranked" if info.reranked else "NOT reranked (order kept)"
        reason = f", reason {info.reason}" if info.reason else ""
        print(f"  {state}{reason}, {info.failures or 0} failed batches, "
              f"{info.unscored or 0} unscored members")
    print(f"  weights on the {info.weight_scale} scale")
    for m in members:
        mark = " (unscored)" if m.unscored else ""
        print(f"  {m.score:9.5f}  {output.shown(m.fragmentid):<20} {_short(m.text, 50)}{mark}")
    if args.histogram:
        print(f"histogram: {args.histogram}")
    return common.EXIT_OK


def _histogram(graph: ThalabusGraph, info: DatasetInfo, path: str) -> None:
    """Plot retrieval against reranker weight of every member (hidden ones too)."""
    from thalabus_graph.rerank.plots import WeightPoint, render_weight_histogram

    members = graph.datasets.members(info.datasetid, include_hidden=True)
    points = [WeightPoint(m.fragmentid, float(m.original_score), m.score, m.unscored)
              for m in members if m.original_score is not None]
    s = graph.settings
    retrieval = info.weight_scale == "retrieval"
    threshold = s.min_reranking_score_doc if retrieval else s.min_reranking_score_frag
    render_weight_histogram(points, path, threshold=threshold,
                            title=f"{info.datasetid} ({len(points)} members)",
                            weight_label=f"weight ({info.weight_scale} scale)")


def _datasets_hide(args: argparse.Namespace) -> int:
    with common.graph(args) as g:
        missing = g.datasets.missing_members(args.dataset, args.members)
        changed = g.datasets.hide(args.dataset, args.members, hidden=args.hidden)
    action = "hidden" if args.hidden else "shown"
    if args.json:
        output.emit_json({"dataset": args.dataset, action: changed, "not_members": missing})
    else:
        print(f"{output.shown(args.dataset)}: {changed} members {action}")
    for member in missing:
        print(f"not a member of {output.shown(args.dataset)}: {output.shown(member)}",
              file=sys.stderr)
    return common.EXIT_BAD_INPUT if missing else common.EXIT_OK
