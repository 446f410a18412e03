"""``thalabus-graph parse``: check a query offline and print its AST as JSON.

Needs no Neo4j; a syntax error prints the positioned message with a caret and exits 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from thalabus_graph.bounds import parse_within_limits
from thalabus_graph.cli import common
from thalabus_graph.query import depth, rerank_query, semantic_clauses, serialize, to_json
from thalabus_graph.settings import Settings

MAX_INDENTED_DEPTH = 64
"""Deeper trees print on one line: indented JSON grows with the square of the depth."""

EXAMPLES = """\
examples:
  thalabus-graph parse '"asylum seeker" AND COUNTRY_OF_ORIGIN=IQ'
  thalabus-graph parse --canonical "(\\"a\\" or \\"b\\") and not DECISION='granted asylum'"
  thalabus-graph parse --summary "@'Jane' OR 'kitchen floor'"
  echo '"a" AND "b"' | thalabus-graph parse -

exit codes: 0 valid query, 2 syntax error (message with position and caret on stderr)
"""


def register(subparsers: Any) -> None:
    """Add the ``parse`` sub-command."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "parse",
        help="parse a query and print its AST as JSON (no Neo4j needed)",
        description="Parse a Thalabus query and print its abstract syntax tree as JSON. "
        'Terms: "semantic phrase", \'text\', @\'Case-Sensitive text\', NAME=VALUE,VALUE; '
        "operators NOT > AND > OR (any letter case) and parentheses.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("query", help="the query text, or - to read it from stdin")
    output = parser.add_mutually_exclusive_group()
    output.add_argument(
        "--canonical", action="store_true",
        help="print the canonical query text instead of the AST",
    )
    output.add_argument(
        "--summary", action="store_true",
        help="print the AST, canonical text, semantic clauses and rerank query as one JSON",
    )
    parser.add_argument(
        "--compact", action="store_true",
        help=f"print JSON on one line (automatic for trees deeper than {MAX_INDENTED_DEPTH})",
    )
    parser.add_argument(
        "--json", action="store_true", help="accepted for symmetry: the output is JSON already",
    )
    common.add_logging_options(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Parse ``args.query`` and print the requested form, held to the query limits the
    ``THALABUS_*`` settings set (as ``query`` is): stdin is read up to one character past
    ``max_query_chars``, which is then refused at that position."""
    settings = Settings.from_env()
    text: str = (sys.stdin.read(settings.max_query_chars + 1).rstrip("\n")
                 if args.query == "-" else args.query)
    node = parse_within_limits(text, settings)
    indent = None if args.compact or depth(node) > MAX_INDENTED_DEPTH else 2
    if args.canonical:
        print(serialize(node))
    elif args.summary:
        summary = {
            "canonical": serialize(node),
            "semantic_clauses": semantic_clauses(node),
            "rerank_query": rerank_query(node),
        }
        head = json.dumps(summary, ensure_ascii=False, indent=indent)
        body = to_json(node, indent=indent)
        if indent is not None:
            body = body.replace("\n", "\n  ")
            print(head[:-2] + ',\n  "ast": ' + body + "\n}")
        else:
            print(head[:-1] + ', "ast": ' + body + "}")
    else:
        print(to_json(node, indent=indent))
    return common.EXIT_OK
