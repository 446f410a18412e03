"""The exception tree of thalabus-graph, grouped by what a caller can do about each failure.

::

    ThalabusError                       root: catch this to catch everything of ours
    ├── ThalabusSyntaxError             malformed query text; has .position and a caret display
    ├── QueryNodeError (ValueError)     a query tree built in Python/JSON with a bad value
    │   └── QueryNodeTypeError (TypeError)  ... or with a value of the wrong type
    ├── PlanError                       a valid query that cannot be planned or evaluated
    │   └── StaleVocabulary             the counts a plan was made with changed before it ran
    ├── ConfigurationError              wrong settings or arguments; fix the call, do not retry
    │   ├── UnknownCategoryError        strict_categories: a filter names no stored category
    │   ├── UnknownLanguageError        a stated query language that no one knows
    │   ├── InvalidTextError (ValueError)   a text argument that is not valid Unicode
    │   ├── CategoryDefinitionError (ValueError)  a graph-defined category that is refused
    │   └── ContextError (ValueError)   a graph context (``context=``) that writes or fails
    ├── CapabilityError                 a backend declared unavailable for what was asked
    ├── IngestError                     a bad input document (has .line_number when known)
    │   └── UnembeddedDocuments         fragments lack vectors and no embedder is configured
    ├── DatasetError                    a dataset write that failed
    │   └── DatasetInputError           also a ConfigurationError: an id that is not found
    │                                   (dataset, goal, document, fragment) or a bad session name
    ├── GraphError                      Neo4j failed (mapped from neo4j.exceptions at one boundary)
    │   ├── QueryTimeout                a query outran its time budget (query_timeout_seconds)
    │   ├── UnknownDatabaseError        also a ConfigurationError: no database of that name
    │   └── OutOfTransactionMemory      a write larger than the server's transaction memory
    ├── LauncherError                   the local Neo4j launcher could not do what was asked
    │   └── PortTaken                   another process bound the chosen port first
    ├── MigrationError                  a migration failed or history disagrees with files
    │   ├── ChecksumMismatch            an applied migration file was edited
    │   ├── LockHeld                    another runner holds the migration lock
    │   └── SettingsMismatch            also a ConfigurationError: placeholder values changed
    └── ServiceError                    an HTTP inference service (embedding, scoring) failed
        ├── ServiceStatusError          a non-retryable HTTP status (4xx except 429)
        ├── ServiceReplyError           a reply of the wrong shape, count or dimension
        └── RetryableServiceError       worth retrying later
            ├── RateLimited             HTTP 429; has .retry_after seconds when given
            └── ServiceTimeout          no answer in time

``QueryNodeError`` and ``QueryNodeTypeError`` also derive from the built-in ``ValueError`` and
``TypeError`` that the query constructors raised before they had their own classes, so older
``except ValueError`` / ``except TypeError`` handlers still catch them. ``UnembeddedDocuments``
and ``PortTaken`` are caught inside the package (ingest reports the documents, the launcher
retries with another port), as are ``StaleVocabulary`` (the query plans again from the fresh
counts) and ``OutOfTransactionMemory`` unless one document alone is too
large (ingest writes a refused batch in halves); they are listed so that every exception class
lives here.

Foreign exceptions (neo4j, httpx) are mapped with ``raise ... from`` where they cross into
our code, so callers never need to import driver exception types.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


class ThalabusError(Exception):
    """Root of every exception raised on purpose by thalabus-graph."""


class ThalabusSyntaxError(ThalabusError):
    """A query text that does not follow the grammar.

    Attributes:
        position: 0-based character offset where the text went wrong.
        text: the whole query text.
        expected: what the parser expected at that position.
    """

    def __init__(self, message: str, position: int, text: str = "") -> None:
        self.position = position
        self.text = text
        self.expected = message
        super().__init__(self._render(message, position, text))

    @staticmethod
    def _render(message: str, position: int, text: str) -> str:
        where = f"position {position}"
        if "\n" in text:
            line = text.count("\n", 0, position) + 1
            column = position - (text.rfind("\n", 0, position) + 1)
            where += f", line {line} column {column + 1}"
        if not text:
            return f"{message} (at {where})"
        shown, caret = ThalabusSyntaxError._display(text, position)
        return f"{message} (at {where})\n  {shown}\n  {caret}"

    @staticmethod
    def _display(text: str, position: int, width: int = 100) -> tuple[str, str]:
        """The line of ``text`` holding ``position`` (cut to ``width``) and its caret line."""
        position = max(0, min(position, len(text)))
        start = text.rfind("\n", 0, position) + 1
        end = text.find("\n", position)
        end = len(text) if end == -1 else end
        prefix = suffix = ""
        if end - start > width:
            left = max(start, min(position - width // 2, end - width))
            right = min(end, left + width)
            prefix = "..." if left > start else ""
            suffix = "..." if right < end else ""
            start, end = left, right
        shown = "".join(c if c == "\t" or c.isprintable() else " " for c in text[start:end])
        pad = "".join("\t" if c == "\t" else " " for c in shown[: position - start])
        return prefix + shown + suffix, " " * len(prefix) + pad + "^"

    def caret(self) -> str:
        """The query line with a caret under the failing position, on two lines."""
        shown, caret = self._display(self.text, self.position)
        return f"{shown}\n{caret}"


class QueryNodeError(ThalabusError, ValueError):
    """A query node built from Python or a JSON tree with an invalid value (an empty phrase, a
    bad category name, an unknown node type, a TRUE where text is needed)."""


class QueryNodeTypeError(QueryNodeError, TypeError):
    """A query node given a value of the wrong type (e.g. a phrase that is not a ``str``)."""


class PlanError(ThalabusError):
    """A syntactically valid query that cannot be planned or evaluated."""


class StaleVocabulary(PlanError):
    """The vocabulary read with a query's first statement differs from the one its plan was
    made with, so the search did not run (``search.vocabulary``); ``row`` is the
    fresh read. Caught inside the package: the query plans again from it."""

    def __init__(self, row: Mapping[str, Any]) -> None:
        super().__init__("the graph's counts changed since the plan's vocabulary read")
        self.row = row


class ConfigurationError(ThalabusError):
    """Wrong settings or arguments: the call must change, retrying will not help."""


class UnknownCategoryError(ConfigurationError):
    """With ``strict_categories``: the query names a category name, value or ontology that no
    document has (or spells one in the wrong letter case). ``warnings`` lists each finding
    (``QueryWarning`` objects) with a "did you mean" where the case differs."""

    def __init__(self, warnings: Sequence[Any]) -> None:
        self.warnings = list(warnings)
        found = "; ".join(str(w) for w in self.warnings)
        super().__init__(f"strict categories: {found}")


class UnknownLanguageError(ConfigurationError):
    """A query's stated language that is neither an ISO 639-1 code nor an English name of a
    language the engine knows; the message lists the known ones."""


class InvalidTextError(ConfigurationError, ValueError):
    """A text argument (an ontology id, a dataset id, a value) holding a lone surrogate, which
    is not valid Unicode and cannot be sent to Neo4j or an inference service."""


class CategoryDefinitionError(ConfigurationError, ValueError):
    """A graph-defined category refused when defined or dropped: a bad name, a pattern that
    is not read-only, that takes a parameter other than ``$value``, calls a procedure or does
    not compile, or a name a stored category already has."""


class ContextError(ConfigurationError, ValueError):
    """A query's graph context (``context=``) refused before anything runs: it writes, calls
    a procedure or does not compile (the server's message is kept)."""


class CapabilityError(ThalabusError):
    """A backend that declares it cannot do what was asked (e.g. an unavailable reranker)."""


class IngestError(ThalabusError):
    """A bad input document; ``line_number`` is the 1-based JSONL line when known."""

    def __init__(self, message: str, line_number: int | None = None) -> None:
        self.line_number = line_number
        prefix = f"line {line_number}: " if line_number is not None else ""
        super().__init__(prefix + message)


class UnembeddedDocuments(IngestError):
    """Documents of a batch whose fragments have no vector while no embedder is configured;
    ``documentids`` names them (ingest reports each one as a bad line)."""

    def __init__(self, documentids: set[str]) -> None:
        super().__init__(f"{len(documentids)} documents need an embedder")
        self.documentids = documentids


class DatasetError(ThalabusError):
    """A dataset or goal operation that failed, e.g. a dataset write that was rolled back."""


class DatasetInputError(DatasetError, ConfigurationError):
    """An id that is not found (a dataset, goal, document or fragment) or a session name that
    cannot be stored: the call must change. Not found is bad input: the CLI exits 2, as for
    any bad input."""


class GraphError(ThalabusError):
    """Neo4j reported a failure; the original driver exception is the ``__cause__``."""


class QueryTimeout(GraphError):
    """A query ran past its time budget (``Settings.query_timeout_seconds``): Neo4j ended a
    read at its transaction timeout, or the deadline had passed before the next read."""


class UnknownDatabaseError(GraphError, ConfigurationError):
    """The server has no database of the name asked (``database=``, ``--database``,
    ``NEO4J_DATABASE``): Neo4j's refusal, and bad input (the CLI exits 2)."""


class OutOfTransactionMemory(GraphError):
    """Neo4j refused a write for its transaction memory limit
    (``dbms.memory.transaction.total.max`` or ``db.memory.transaction.max``), raised inside
    the transaction function. The driver retries a transient error (this one is) for up to
    30 s with back-off, five attempts and ~35 s, though the same write can never fit; an
    exception of ours ends the transaction at once, and ingest writes the batch in halves."""


class LauncherError(ThalabusError):
    """The local Neo4j launcher could not install, start, stop or find a server."""


class PortTaken(LauncherError):
    """Another process bound the auto-chosen port first; ``start`` retries with a new one."""


class MigrationError(ThalabusError):
    """A migration failed, or the applied history disagrees with the migration files."""


class ChecksumMismatch(MigrationError):
    """An already applied migration file was edited after it was applied."""


class LockHeld(MigrationError):
    """Another migration runner holds the lock."""


class SettingsMismatch(MigrationError, ConfigurationError):
    """An applied migration used other placeholder values (e.g. vector dimensions) than now."""


class ServiceError(ThalabusError):
    """An HTTP inference service (embedding or scoring) failed."""


class ServiceStatusError(ServiceError):
    """A non-retryable HTTP status; ``status_code`` holds it."""

    def __init__(self, message: str, status_code: int) -> None:
        self.status_code = status_code
        super().__init__(message)


class ServiceReplyError(ServiceError):
    """A reply that is not of the documented shape (bad JSON, wrong count or dimension)."""


class RetryableServiceError(ServiceError):
    """A failure that may pass if the call is repeated later."""


class RateLimited(RetryableServiceError):
    """HTTP 429; ``retry_after`` is the server's hint in seconds, when it gave one."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        self.retry_after = retry_after
        super().__init__(message)


class ServiceTimeout(RetryableServiceError):
    """The service did not answer in time."""


__all__ = [
    "CapabilityError",
    "ChecksumMismatch",
    "ConfigurationError",
    "DatasetError",
    "DatasetInputError",
    "GraphError",
    "IngestError",
    "InvalidTextError",
    "LauncherError",
    "LockHeld",
    "MigrationError",
    "PlanError",
    "PortTaken",
    "QueryNodeError",
    "QueryNodeTypeError",
    "QueryTimeout",
    "RateLimited",
    "RetryableServiceError",
    "ServiceError",
    "ServiceReplyError",
    "ServiceStatusError",
    "ServiceTimeout",
    "SettingsMismatch",
    "StaleVocabulary",
    "ThalabusError",
    "ThalabusSyntaxError",
    "UnembeddedDocuments",
    "UnknownCategoryError",
    "UnknownDatabaseError",
    "UnknownLanguageError",
]
