"""The flags every query-like command shares: the scope (``--ontology-id``,
``--subset-of-datasetids``, ``--required-filter``), the query's language, strict categories and
the graph context per result (``--context``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from thalabus_graph import languages
from thalabus_graph.errors import UnknownLanguageError


def language(text: str) -> str | None:
    """A ``--language`` value checked before any connection: an unknown language is bad
    input (exit 2), with the known ones named."""
    try:
        return languages.checked_language(text)
    except UnknownLanguageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def add_language(parser: argparse.ArgumentParser) -> None:
    """``--language``."""
    parser.add_argument(
        "--language", default=None, metavar="LANG", type=language,
        help="the query's language (ISO 639-1 code or name): its phrases' text search uses "
             "that language's analyzer; default: detected per phrase among the graph's "
             "languages")


def add_scope(p: argparse.ArgumentParser) -> None:
    """The scope flags, named as the API and MCP name them (short forms beside)."""
    p.add_argument("--ontology-id", "--ontology", dest="ontology", default=None,
                   help="restrict to one ontology (ontology_id)")
    p.add_argument("--subset-of-datasetids", "--within", dest="within", action="append",
                   default=None, metavar="DATASET",
                   help="restrict to documents of these datasets, repeatable "
                        "(subset_of_datasetids; --within for short)")
    p.add_argument("--required-filter", default=None, metavar="FILTER",
                   help="categories (stored or graph-defined) the query is held to, e.g. "
                        "READABLE_BY=alice; no query text widens it")


def context_text(value: str) -> str:
    """A ``--context`` value: Cypher, or ``@FILE`` for the Cypher in that file."""
    if not value.startswith("@"):
        return value
    try:
        return Path(value[1:]).read_text(encoding="utf-8")
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"cannot read the context file {value[1:]}: "
                                         f"{exc.strerror}") from exc


def add_context(p: argparse.ArgumentParser) -> None:
    """``--context``."""
    p.add_argument("--context", default=None, metavar="CYPHER", type=context_text,
                   help="a read-only Cypher fragment run for each result: it sees `document` "
                        "(and `fragment`) and returns columns, shown with each result in "
                        "--json; @FILE reads it from a file")


def add_strict_categories(parser: argparse.ArgumentParser) -> None:
    """``--language`` and ``--strict-categories``."""
    add_language(parser)
    parser.add_argument(
        "--strict-categories", action="store_true",
        help="fail (exit 2) when a category name, value or the ontology matches no stored "
             "document, instead of warning on stderr")
