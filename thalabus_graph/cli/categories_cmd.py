"""``thalabus-graph categories define | drop | list``: categories the application defines by a
Cypher pattern over its own graph (``graph.category_definitions``)."""

from __future__ import annotations

import argparse
from typing import Any

from thalabus_graph.cli import common, output

EXAMPLES = """\
examples:
  thalabus-graph categories define READABLE_BY '(document)<-[:CAN_READ]-(:User {name: $value})'
  thalabus-graph query '"kitchen floor" AND READABLE_BY=alice'
  thalabus-graph categories list --json
  thalabus-graph categories drop READABLE_BY

A pattern is read-only Cypher over `document`, with $value its one parameter; a query writes
the name like any category (NAME=v1,v2) under AND, OR and NOT.
"""


def register(subparsers: Any) -> None:
    """Add the ``categories`` sub-command and its actions."""
    raw = argparse.RawDescriptionHelpFormatter
    p = subparsers.add_parser("categories", help="define, drop or list graph-defined categories",
                              formatter_class=raw, epilog=EXAMPLES)
    sub = p.add_subparsers(dest="categories_command", required=True, metavar="ACTION")
    q = sub.add_parser("define", help="define (or redefine) a category by a Cypher pattern",
                       formatter_class=raw, epilog=EXAMPLES)
    q.add_argument("name", help="the category name queries write (NAME=value)")
    q.add_argument("pattern", help="read-only Cypher over `document`, $value its one parameter")
    common.add_common_options(q)
    q.set_defaults(handler=_define)
    q = sub.add_parser("drop", help="remove a graph-defined category", formatter_class=raw,
                       epilog="example:\n  thalabus-graph categories drop READABLE_BY")
    q.add_argument("name")
    common.add_common_options(q)
    q.set_defaults(handler=_drop)
    q = sub.add_parser("list", help="every graph-defined category", formatter_class=raw,
                       epilog="example:\n  thalabus-graph categories list --json")
    common.add_common_options(q)
    q.set_defaults(handler=_list)


def _define(args: argparse.Namespace) -> int:
    with common.graph(args) as graph:
        definition = graph.define_category(args.name, args.pattern)
    if args.json:
        output.emit_json(definition.to_dict())
    else:
        print(f"defined {definition.name}: {definition.pattern}")
    return common.EXIT_OK


def _drop(args: argparse.Namespace) -> int:
    with common.graph(args) as graph:
        dropped = graph.drop_category(args.name)
    if args.json:
        output.emit_json({"name": args.name, "dropped": dropped})
    else:
        print(f"dropped {args.name}" if dropped else f"no category {args.name} was defined")
    return common.EXIT_OK


def _list(args: argparse.Namespace) -> int:
    with common.graph(args) as graph:
        definitions = graph.defined_categories()
    if args.json:
        output.emit_json([d.to_dict() for d in definitions])
        return common.EXIT_OK
    print(f"{len(definitions)} graph-defined categories")
    for definition in definitions:
        print(f"  {definition.name:<20} {definition.pattern}")
    return common.EXIT_OK
