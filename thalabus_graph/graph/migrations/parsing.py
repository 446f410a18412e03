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
    return _Splitter(text).run()


class _Splitter:
    """One pass of ``split_statements`` over a text: where it is (index and line), the quote
    it is inside, the statement being gathered and the statements done."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.n = len(text)
        self.i = 0
        self.line = 1
        self.quote: str | None = None
        """', " or ` while inside a string or quoted identifier."""
        self.first: int | None = None
        """The line of the current statement's first character."""
        self.current: list[str] = []
        self.statements: list[Statement] = []

    def run(self) -> list[Statement]:
        """Every statement of the text; an unterminated quote is a ``MigrationError``."""
        while self.i < self.n:
            if self.quote is not None:
                self._quoted()
            elif not self._comment():
                self._plain()
        if self.quote is not None:
            raise MigrationError(f"unterminated {self.quote} quote in the statement starting "
                                 f"at line {self.first}")
        self._flush()
        return self.statements

    def _quoted(self) -> None:
        """Keep one character inside a quote exactly: a backslash escape (outside backticks)
        or a doubled backtick as a pair, the closing quote ending it."""
        text, i, ch = self.text, self.i, self.text[self.i]
        self.current.append(ch)
        if ch == "\\" and self.quote != "`" and i + 1 < self.n:
            self.current.append(text[i + 1])
            self.line += text[i + 1] == "\n"
            self.i += 2
            return
        if ch == self.quote:
            if self.quote == "`" and i + 1 < self.n and text[i + 1] == "`":
                self.current.append("`")
                self.i += 2
                return
            self.quote = None
        self.line += ch == "\n"
        self.i += 1

    def _comment(self) -> bool:
        """Skip a comment starting here (a block comment leaves a space); False when none
        does."""
        text, i = self.text, self.i
        if text.startswith("//", i):
            end = text.find("\n", i)
            self.i = self.n if end < 0 else end
            return True
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = self.n if end < 0 else end + 2
            self.line += text.count("\n", i, end)
            self.current.append(" ")
            self.i = end
            return True
        return False

    def _plain(self) -> None:
        """One character outside quotes and comments: a separating ``;``, a line end, or
        statement text (maybe opening a quote)."""
        ch = self.text[self.i]
        self.i += 1
        if ch == ";" and _ends_line(self.text, self.i):
            self._flush()
            return
        if ch == "\n":
            self._end_of_line()
            self.line += 1
            return
        if self.first is None and not ch.isspace():
            self.first = self.line
        if ch in "'\"`":
            self.quote = ch
        self.current.append(ch)

    def _flush(self) -> None:
        """End the current statement; an empty one is dropped."""
        body = "".join(self.current).strip()
        if body and self.first is not None:
            self.statements.append(Statement(body, self.first))
        self.current, self.first = [], None

    def _end_of_line(self) -> None:
        """Drop the trailing spaces of a line and keep one line break."""
        while self.current and self.current[-1] in " \t\r":
            self.current.pop()
        if self.current and self.current[-1] != "\n":
            self.current.append("\n")


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
