"""The ``thalabus-graph`` command line: one module per command group, each with ``register``.

Exit codes: 0 ok, 2 bad input (syntax, arguments, input files), 1 any other failure, 141 when
the reader of stdout went away (``... | head``), as for any Unix tool killed by SIGPIPE.
Errors print in one line on stderr, with the fix when one is known; with ``--json`` they are
also printed on stdout as ``{"error": {"type", "message", ...}}``.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from thalabus_graph.cli import common, output
from thalabus_graph.errors import (
    IngestError,
    ThalabusError,
    ThalabusSyntaxError,
    UnknownCategoryError,
)

EXIT_BROKEN_PIPE = 141

COMMAND_MODULES = (
    "thalabus_graph.cli.neo4j_cmd",
    "thalabus_graph.cli.parse_cmd",
    "thalabus_graph.cli.migrate_cmd",
    "thalabus_graph.cli.graph_cmds",
    "thalabus_graph.cli.categories_cmd",
    "thalabus_graph.cli.goal_cmd",
    "thalabus_graph.cli.mcp_cmd",
    "thalabus_graph.cli.calibrate_cmd",
    "thalabus_graph.cli.procedures_cmd",
)


FIRST_STEPS = """examples (each command's --help shows more):
  export NEO4J_URI=$(thalabus-graph neo4j start --data ~/thalabus-neo4j | tail -n 1)
  thalabus-graph migrate
  thalabus-graph ingest documents.jsonl
  thalabus-graph query '"how do I clean a kitchen floor?"' --limit 3
  thalabus-graph neo4j stop --data ~/thalabus-neo4j
"""
"""The top-level help's examples: a newcomer's first session, in the order it runs."""


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every registered sub-command."""
    import importlib

    parser = _Parser(
        prog="thalabus-graph",
        description="Neo4j-native retrieval: boolean queries over semantic, text and "
        "category search, fragment-level datasets and reranking.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=FIRST_STEPS,
    )
    common.add_logging_options(parser, top_level=True)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:  # a missing module is a packaging bug: let it raise
        importlib.import_module(name).register(subparsers)
    return parser


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose usage error is one line on stderr (the usage is what
    ``--help`` prints) and, when the command line asks for ``--json``, also the JSON error
    object on stdout, as every other error of the CLI is. Sub-command parsers are of this
    class too (argparse makes them of their parent's)."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message} (see {self.prog} --help)", file=sys.stderr)
        if _JSON_WANTED:
            output.emit_json({"error": {"type": "UsageError", "message": message}})
        raise SystemExit(common.EXIT_BAD_INPUT)


_JSON_WANTED: list[bool] = []
"""Non-empty while ``main`` parses arguments that hold ``--json`` (``main`` may be given
them directly, not through ``sys.argv``)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit code."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    undecodable = _undecodable(arguments)
    if undecodable is not None:
        print(f"error: {undecodable}", file=sys.stderr)
        if "--json" in arguments:
            output.emit_json({"error": {"type": "ConfigurationError", "message": undecodable}})
        return common.EXIT_BAD_INPUT
    parser = build_parser()
    _JSON_WANTED[:] = [True] if "--json" in arguments else []
    try:
        args, extra = parser.parse_known_args(arguments)
        split = _split_query(args, extra)
        if split is not None:
            print(f"error: {split}", file=sys.stderr)
            if _JSON_WANTED:
                output.emit_json({"error": {"type": "UsageError", "message": split}})
            return common.EXIT_BAD_INPUT
        if extra:
            args = parser.parse_args(arguments)  # argparse's error for what it cannot place
    finally:
        _JSON_WANTED.clear()
    common.configure_logging(args)
    if getattr(args, "json", False):
        args.handler = _errors_as_json(args.handler)
    try:
        return common.run(args)
    except BrokenPipeError:
        # The reader closed the pipe: say nothing, and point stdout at /dev/null so the
        # interpreter's final flush does not raise again (Python docs, "Note on SIGPIPE").
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


QUERY_COMMANDS = ("query", "explain", "parse")
"""The sub-commands whose one positional argument is a query text."""


def _split_query(args: argparse.Namespace, extra: Sequence[str]) -> str | None:
    """The message for a query the shell split into words (``query kitchen floor``: the
    text is ``kitchen``, and ``floor`` is left over), or None. The words are shown as the
    query they would make, with the quoting that keeps it one argument."""
    text = getattr(args, "text", None) or getattr(args, "query", None)
    if (getattr(args, "command", None) not in QUERY_COMMANDS or not extra or not text
            or any(word.startswith("-") for word in extra)):
        return None
    words = " ".join([text, *extra])
    return (f"the query arrived as {len(extra) + 1} arguments ({words}): the shell splits "
            "unquoted words, and a bare word is an error in the query language; put the "
            f"whole query in one pair of quotes: '\"{words}\"' searches by meaning, "
            f"\"'{words}'\" by text (thalabus-graph {args.command} --help)")


def _undecodable(arguments: Sequence[str]) -> str | None:
    """The message for the first argument that is not valid UTF-8, or None. Python decodes
    argv with ``surrogateescape``: an invalid byte arrives as a lone surrogate, which could
    never be sent to Neo4j; the original bytes are shown (escaped) in the message."""
    for number, argument in enumerate(arguments, start=1):
        try:
            argument.encode("utf-8")
        except UnicodeEncodeError:
            raw = os.fsencode(argument)
            return (f"argument {number} is not valid UTF-8 text: {raw!r}; "
                    "give queries and names in UTF-8")
    return None


def error_dict(exc: ThalabusError) -> dict[str, Any]:
    """The JSON form of one of our errors: its type and message, and where it went wrong."""
    out: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc)}
    if isinstance(exc, ThalabusSyntaxError):
        out.update(position=exc.position, expected=exc.expected)
    if isinstance(exc, IngestError) and exc.line_number is not None:
        out["line"] = exc.line_number
    if isinstance(exc, UnknownCategoryError):
        out["warnings"] = [w.to_dict() for w in exc.warnings]
    return {"error": out}


def _errors_as_json(handler: common.Handler) -> common.Handler:
    """Wrap a handler so that one of our errors is also printed as JSON on stdout; the error is
    re-raised, so the exit code and the one-line message on stderr stay ``common.run``'s."""

    @functools.wraps(handler)
    def wrapped(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except ThalabusError as exc:
            output.emit_json(error_dict(exc))
            raise

    return wrapped


if __name__ == "__main__":
    sys.exit(main())
