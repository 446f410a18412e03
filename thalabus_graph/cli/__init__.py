"""The ``thalabus-graph`` command line: one module per command group, each with ``register``.

Exit codes: 0 ok, 2 bad input (syntax, arguments, input files), 1 any other failure.
Errors print in one line on stderr, with the fix when one is known.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from thalabus_graph.cli import common

COMMAND_MODULES = (
    "thalabus_graph.cli.neo4j_cmd",
    "thalabus_graph.cli.parse_cmd",
    "thalabus_graph.cli.migrate_cmd",
    "thalabus_graph.cli.graph_cmds",
)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every registered sub-command."""
    import importlib

    parser = argparse.ArgumentParser(
        prog="thalabus-graph",
        description="Neo4j-native retrieval: boolean queries over semantic, text and "
        "category search, fragment-level datasets and reranking.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    common.add_logging_options(parser, top_level=True)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    common.configure_logging(args)
    return common.run(args)


if __name__ == "__main__":
    sys.exit(main())
