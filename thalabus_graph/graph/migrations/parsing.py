"""Reading a migration file's text: statements split on ``;``, placeholders filled.

Pure functions: no file or database access. Placeholder values come from validated
``Settings`` values, never from user text, so they can be pasted into Cypher.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from thalabus_graph.errors import (
    ConfigurationError,
    MigrationError,
)
from thalabus_graph.settings import Settings

PLACEHOLDER_PATTERN = re.compile(r"\{\{\s*([A-Z][A-Z0-9_]*)\s*\}\}")
VECTOR_SIMILARITIES = ("cosine", "euclidean")
_ANALYZER_PATTERN = re.compile(r"^[A-Za-z0-9_.\-]+$")



@dataclass(frozen=True)
class Statement:
    """One statement of a migration file: its text (comments removed) and first line number."""

    text: str
    line: int

    @property
    def first_line(self) -> str:
        """The first non-blank line of the statement, for error messages."""
        return next((ln.strip() for ln in self.text.splitlines() if ln.strip()), "")


def split_statements(text: str) -> list[Statement]:
    """Split Cypher text on ``;`` at the end of a line, outside strings and comments.

    A ``;`` counts as a separator when only whitespace or a comment follows it on its line.
    Comments are removed, and outside strings so are trailing spaces and blank lines; text
    inside strings and quoted identifiers is kept exactly. Empty statements are dropped; the
    last statement needs no ``;``.

    Example:
        >>> [s.text for s in split_statements("RETURN ';';\\nRETURN 2")]
        ["RETURN ';'", 'RETURN 2']
    """
    statements: list[Statement] = []
    current: list[str] = []
    first: int | None = None  # line of the statement's first character
    line = 1
    i, n = 0, len(text)
    quote: str | None = None  # ', " or ` while inside a string or quoted identifier

    def flush() -> None:
        nonlocal current, first
        body = "".join(current).strip()
        if body and first is not None:
            statements.append(Statement(body, first))
        current, first = [], None

    def end_of_line() -> None:
        while current and current[-1] in " \t\r":
            current.pop()
        if current and current[-1] != "\n":
            current.append("\n")

    while i < n:
        ch = text[i]
        if quote is not None:
            current.append(ch)
            if ch == "\\" and quote != "`" and i + 1 < n:
                current.append(text[i + 1])
                line += text[i + 1] == "\n"
                i += 2
                continue
            if ch == quote:
                if quote == "`" and i + 1 < n and text[i + 1] == "`":
                    current.append("`")
                    i += 2
                    continue
                quote = None
            line += ch == "\n"
            i += 1
            continue
        if text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += text.count("\n", i, end)
            current.append(" ")
            i = end
            continue
        if ch == ";" and _ends_line(text, i + 1):
            flush()
            i += 1
            continue
        if ch == "\n":
            end_of_line()
            line += 1
            i += 1
            continue
        if first is None and not ch.isspace():
            first = line
        if ch in "'\"`":
            quote = ch
        current.append(ch)
        i += 1
    if quote is not None:
        raise MigrationError(f"unterminated {quote} quote in the statement starting at line "
                             f"{first}")
    flush()
    return statements


def _ends_line(text: str, i: int) -> bool:
    """True when only whitespace or a comment follows position ``i`` on its line."""
    n = len(text)
    while i < n and text[i] in " \t\r":
        i += 1
    return i >= n or text[i] == "\n" or text.startswith("//", i) or text.startswith("/*", i)


def placeholder_values(settings: Settings) -> dict[str, str]:
    """The placeholder values from settings, validated so they can be pasted into Cypher."""
    dims = settings.embedding_dimensions
    if isinstance(dims, bool) or not isinstance(dims, int) or dims <= 0:
        raise ConfigurationError(f"embedding_dimensions must be a positive integer, not {dims!r}")
    if settings.vector_similarity not in VECTOR_SIMILARITIES:
        raise ConfigurationError(f"vector_similarity must be one of {VECTOR_SIMILARITIES}, "
                                 f"not {settings.vector_similarity!r}")
    if not _ANALYZER_PATTERN.match(settings.fulltext_analyzer):
        raise ConfigurationError(f"fulltext_analyzer {settings.fulltext_analyzer!r} is not an "
                                 "analyzer name (letters, digits, '-', '_', '.')")
    return {
        "EMBEDDING_DIMENSIONS": str(dims),
        "VECTOR_SIMILARITY": settings.vector_similarity,
        "FULLTEXT_ANALYZER": settings.fulltext_analyzer,
        "VECTOR_QUANTIZATION": "true" if settings.vector_quantization else "false",
        "VECTOR_HNSW_M": _bounded_int("vector_hnsw_m", settings.vector_hnsw_m, 512),
        "VECTOR_HNSW_EF_CONSTRUCTION": _bounded_int(
            "vector_hnsw_ef_construction", settings.vector_hnsw_ef_construction, 3200),
    }


def _bounded_int(name: str, value: object, upper: int) -> str:
    """An integer setting in [1, upper] as Cypher text (Neo4j's own bounds for HNSW options)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= upper:
        raise ConfigurationError(f"{name} must be an integer in [1, {upper}], not {value!r}")
    return str(value)


def substitute(text: str, values: Mapping[str, str], *, where: str = "") -> str:
    """Replace every ``{{NAME}}``; an unknown name is a ``MigrationError``."""

    def repl(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise MigrationError(f"{where}: unknown placeholder {{{{{name}}}}} "
                                 f"(known: {', '.join(sorted(values))})")
        return values[name]

    return PLACEHOLDER_PATTERN.sub(repl, text)
