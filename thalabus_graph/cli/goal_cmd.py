"""``thalabus-graph goal use | load | show``: attach datasets and documents to a goal, and print
the goal's context (the RAG message it contributes, with its budgets) from a shell."""

from __future__ import annotations

import argparse
from typing import Any

from thalabus_graph.cli import common, output
from thalabus_graph.errors import ConfigurationError
from thalabus_graph.goals import GoalContext

EXAMPLES = """\
examples:
  thalabus-graph goal use my-goal 'default#rerank_1'
  thalabus-graph goal load my-goal docid-1003
  thalabus-graph goal show my-goal
  thalabus-graph goal show my-goal --char-budget 8000 --loaded-budget 2000 --json

budgets: each collection (the goal's own RAG fragments, its datasets' members) fills at most
--char-budget (MAX_RAG_MESSAGE_LENGTH) characters; the loaded documents at most
--loaded-budget (MAX_LOADED_DOCUMENT_LENGTH); the message is cut to --char-budget minus what the
loaded documents use.
"""


def register(subparsers: Any) -> None:
    """Add the ``goal`` sub-command and its actions."""
    p = subparsers.add_parser(
        "goal", help="attach datasets and documents to a goal; show its context",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EXAMPLES)
    sub = p.add_subparsers(dest="goal_command", required=True, metavar="ACTION")
    raw = argparse.RawDescriptionHelpFormatter
    q = sub.add_parser("use", help="the goal uses a dataset (the goal is created when new)",
                       formatter_class=raw,
                       epilog="example:\n  thalabus-graph goal use my-goal 'default#rerank_1'")
    q.add_argument("goal", help="the goal's id (any text; created when new)")
    q.add_argument("dataset", help="dataset id")
    common.add_common_options(q)
    q.set_defaults(handler=_use)
    q = sub.add_parser("load", help="load a whole document into the goal", formatter_class=raw,
                       epilog="example:\n  thalabus-graph goal load my-goal docid-1003")
    q.add_argument("goal", help="the goal's id (any text; created when new)")
    q.add_argument("document", help="document id")
    common.add_common_options(q)
    q.set_defaults(handler=_load)
    q = sub.add_parser("show", help="the goal's context and RAG message", formatter_class=raw,
                       epilog="examples:\n  thalabus-graph goal show my-goal\n"
                              "  thalabus-graph goal show my-goal --char-budget 8000 --json")
    q.add_argument("goal", help="the goal's id (any text; created when new)")
    q.add_argument("--min-score", type=common.finite_float(None), default=None,
                   help="threshold of reranker weights (default MIN_RERANKING_SCORE_FRAG)")
    q.add_argument("--min-retrieval-score", type=common.finite_float(0.0, 1.0), default=None,
                   help="threshold of retrieval weights (default MIN_RERANKING_SCORE_DOC)")
    q.add_argument("--target", type=int, default=None,
                   help="fill-up target (default MAX_RERANKING_OUTPUT_DOC)")
    q.add_argument("--char-budget", type=int, default=None,
                   help="message budget (default MAX_RAG_MESSAGE_LENGTH)")
    q.add_argument("--loaded-budget", type=int, default=None,
                   help="loaded-documents budget (default MAX_LOADED_DOCUMENT_LENGTH)")
    common.add_common_options(q)
    q.set_defaults(handler=_show)


def _use(args: argparse.Namespace) -> int:
    with common.graph(args) as g:
        ordinal = g.goals.use_dataset(args.goal, args.dataset)
    if args.json:
        output.emit_json({"goal": args.goal, "dataset": args.dataset, "ordinal": ordinal})
    else:
        print(f"goal {output.shown(args.goal)} uses {output.shown(args.dataset)} "
              f"(ordinal {ordinal})")
    return common.EXIT_OK


def _load(args: argparse.Namespace) -> int:
    with common.graph(args) as g:
        ordinal = g.goals.load_document(args.goal, args.document)
    if args.json:
        output.emit_json({"goal": args.goal, "document": args.document, "ordinal": ordinal})
    else:
        print(f"goal {output.shown(args.goal)} loads {output.shown(args.document)} "
              f"(ordinal {ordinal})")
    return common.EXIT_OK


def _show(args: argparse.Namespace) -> int:
    for name in ("target", "char_budget", "loaded_budget"):
        value = getattr(args, name)
        if value is not None and value < 0:
            raise ConfigurationError(f"--{name.replace('_', '-')} must not be negative")
    with common.graph(args) as g:
        ctx = g.goal_context(args.goal, min_score=args.min_score,
                             min_retrieval_score=args.min_retrieval_score, target=args.target,
                             char_budget=args.char_budget, loaded_budget=args.loaded_budget)
    if args.json:
        output.emit_json({"goal": args.goal, **ctx.to_dict()})
        return common.EXIT_OK
    for line in summary(args.goal, ctx):
        print(line)
    if ctx.message:
        print("--")
        print(ctx.message)
    return common.EXIT_OK


def summary(goal: str, ctx: GoalContext) -> list[str]:
    """The lines printed above the message: what the context holds and how it was cut, with
    stored names escaped (``output.shown``); the message below them is the LLM's text, as
    it is."""
    datasets = ", ".join(f"{output.shown(d)} ({ctx.weight_scales.get(d, '?')} scale)"
                         for d in ctx.datasets)
    fill = f"from {output.shown(', '.join(ctx.filled_from))}" if ctx.fill_up_used else "not used"
    out = [f"goal {output.shown(goal)}: {len(ctx.fragments)} fragments "
           f"({ctx.rag_fragments} its own), "
           f"{len(ctx.loaded)} loaded documents",
           f"  datasets: {datasets or '-'}",
           f"  fill-up: {fill}; collections {'stopped at' if ctx.truncated else 'within'} "
           f"the budget"]
    for d in ctx.loaded:
        cut = " (cut)" if d.truncated else ""
        out.append(f"  loaded {output.shown(d.documentid)}: {len(d.text)} of "
                   f"{d.characters} characters{cut}")
    cut = ", truncated" if ctx.message_truncated else ""
    out.append(f"  message: {len(ctx.lines)} lines, {len(ctx.message)} of "
               f"{ctx.message_budget} characters{cut}")
    return out
