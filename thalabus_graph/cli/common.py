"""Shared CLI plumbing: the --uri/--json options, JSON/table output and error-to-exit mapping."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from thalabus_graph.errors import (
    ConfigurationError,
    IngestError,
    ThalabusError,
    ThalabusSyntaxError,
)

DEFAULT_URI = "bolt://127.0.0.1:7687"
EXIT_OK, EXIT_FAILURE, EXIT_BAD_INPUT = 0, 1, 2

Handler = Callable[[argparse.Namespace], int]


def default_uri() -> str:
    """``NEO4J_URI`` when set, else the local default Bolt address."""
    return os.environ.get("NEO4J_URI", DEFAULT_URI)


def add_common_options(parser: argparse.ArgumentParser, *, uri: bool = True) -> None:
    """Add ``--json`` (and ``--uri`` unless told not to) to a sub-command."""
    if uri:
        parser.add_argument(
            "--uri", default=None,
            help=f"Bolt URI of the Neo4j server (default: $NEO4J_URI, else {DEFAULT_URI})",
        )
        parser.add_argument("--database", default="neo4j", help="database name (default neo4j)")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def emit_json(value: Any) -> None:
    """Print one JSON document on stdout."""
    print(json.dumps(value, ensure_ascii=False, indent=2, default=str))


def run(args: argparse.Namespace) -> int:
    """Call the sub-command handler and map our exceptions to exit codes and one-line errors."""
    handler: Handler = args.handler
    try:
        return handler(args)
    except ThalabusSyntaxError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (ConfigurationError, IngestError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ThalabusError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
