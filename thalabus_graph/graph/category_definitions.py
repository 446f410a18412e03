"""Graph-defined categories: a category name the application defines by a Cypher pattern over
its own graph, such as ``READABLE_BY`` as ``(document)<-[:CAN_READ]-(:User {name: $value})``.

A query writes it like a stored category (``READABLE_BY=alice,bob``): a document has the value
``v`` when the pattern matches with ``document`` bound to it and ``$value`` to ``v``. The
definition is a ``(:CategoryDefinition {name, pattern})`` node, so every process of the
application sees it, and each query reads the definitions of the names it uses, in its own
read transaction. The pattern is text the application's operator wrote, checked when defined:
read-only (``EXPLAIN`` says so), ``$value`` its one parameter, no procedure call, no comment,
no ``;`` and balanced brackets, so it cannot leave the subquery it is placed in. The value is
never text in a statement: the pattern reads it from a variable the statement binds to each
asked value (``cypher/defined_category_documents``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from neo4j import ManagedTransaction
from neo4j.exceptions import Neo4jError

from thalabus_graph.errors import CategoryDefinitionError
from thalabus_graph.graph import cypher_library
from thalabus_graph.graph.database import Database, arguments, prepared

VALUE_VARIABLE = "thalabus_value"
"""The variable the statement binds to each asked value; the pattern's ``$value`` reads it."""
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
"""A defined name, as the query language writes a category name."""
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PARAMETER = re.compile(r"\$\s*([A-Za-z_][A-Za-z0-9_]*|\d+)")
_CLOSING = {")": "(", "]": "[", "}": "{"}
MAX_PATTERN_CHARS = 4000
"""The longest pattern accepted: a filter over a few hops, not a program."""


@dataclass(frozen=True)
class CategoryDefinition:
    """A category name and the pattern that decides which documents have each value."""

    name: str
    pattern: str

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"name": self.name, "pattern": self.pattern}

    def match_clause(self) -> str:
        """The pattern as the ``MATCH`` of the statement's subquery, ``$value`` read from
        ``VALUE_VARIABLE``."""
        body = _with_value_variable(self.pattern)
        return body if re.match(r"(?i)\s*(OPTIONAL\s+)?MATCH\b", body) else f"MATCH {body}"

    def statement(self, params: Mapping[str, Any] | None = None) -> str:
        """``defined_category_documents`` with this pattern in its slot (its sections as
        ``params`` keep them)."""
        return cypher_library.fill("defined_category_documents", params,
                                   pattern=self.match_clause())


def _code_spans(text: str) -> Iterable[tuple[int, int, str]]:
    """``text`` split into (start, end, kind): kind ``code`` outside literals, ``string``
    for a quoted string, ``name`` for a backtick-quoted name.

    Raises:
        CategoryDefinitionError: a quote is not closed.
    """
    pos, start = 0, 0
    while pos < len(text):
        char = text[pos]
        if char in "'\"`":
            if start < pos:
                yield start, pos, "code"
            end = pos + 1
            while end < len(text) and text[end] != char:
                end += 2 if text[end] == "\\" and char != "`" else 1
            if end >= len(text):
                raise CategoryDefinitionError(f"the pattern has an unclosed {char} at {pos}")
            yield pos, end + 1, "name" if char == "`" else "string"
            pos = start = end + 1
            continue
        pos += 1
    if start < len(text):
        yield start, len(text), "code"


def _parameters(pattern: str) -> list[tuple[int, int, str]]:
    """Each parameter of ``pattern`` as (start, end, name), outside string literals:
    ``$name``, ``$0`` and ``$`a quoted name``` (Cypher reads ``$`value``` as ``$value``).

    Raises:
        CategoryDefinitionError: a quote is not closed.
    """
    spans = list(_code_spans(pattern))
    out: list[tuple[int, int, str]] = []
    for i, (start, end, kind) in enumerate(spans):
        if kind != "code":
            continue
        piece = pattern[start:end]
        out += [(start + m.start(), start + m.end(), m.group(1))
                for m in _PARAMETER.finditer(piece)]
        quoted = re.search(r"\$\s*\Z", piece)
        if quoted and i + 1 < len(spans) and spans[i + 1][2] == "name":
            name_start, name_end, _ = spans[i + 1]
            out.append((start + quoted.start(), name_end,
                        pattern[name_start + 1:name_end - 1]))
    return sorted(out)


def _with_value_variable(pattern: str) -> str:
    """``pattern`` as its statement's subquery holds it: ``$value`` read from the bound
    variable, and each ``$`` inside a string literal escaped (``inert_dollars``), so the
    statements' parameter rewriting leaves the string as the operator wrote it."""
    edits = [(start, end, VALUE_VARIABLE) for start, end, name in _parameters(pattern)
             if name == "value"]
    edits += [(start, end, cypher_library.inert_dollars(pattern[start:end]))
              for start, end, kind in _code_spans(pattern)
              if kind == "string" and "$" in pattern[start:end]]
    out, at = [], 0
    for start, end, text in sorted(edits):
        out += [pattern[at:start], text]
        at = end
    return "".join([*out, pattern[at:]])


def check_name(name: str) -> str:
    """``name`` when the query language can write it as a category name.

    Raises:
        CategoryDefinitionError: it cannot.
    """
    if not isinstance(name, str) or not NAME.match(name):
        raise CategoryDefinitionError(
            f"category name {name!r}: a name is letters, digits and '_', not starting with a "
            "digit (as NAME=VALUE writes it)")
    return name


def check_pattern(pattern: str) -> str:
    """``pattern`` stripped, when its text may sit in a subquery: not empty, at most
    ``MAX_PATTERN_CHARS``, ``$value`` its one parameter and used, ``document`` named, no
    procedure call, no comment or ``;``, brackets balanced outside quotes.

    Raises:
        CategoryDefinitionError: naming the first rule broken.
    """
    if not isinstance(pattern, str) or not pattern.strip():
        raise CategoryDefinitionError("the pattern is empty: write a pattern over `document`, "
                                      "e.g. (document)<-[:CAN_READ]-(:User {name: $value})")
    pattern = pattern.strip()
    if len(pattern) > MAX_PATTERN_CHARS:
        raise CategoryDefinitionError(f"the pattern is longer than {MAX_PATTERN_CHARS} "
                                      "characters")
    code = " ".join(pattern[s:e] if kind == "code" else " "
                    for s, e, kind in _code_spans(pattern))
    refused = next((what for token, what in
                    ((";", "';' (one pattern, not statements)"),
                     ("//", "a comment"), ("/*", "a comment")) if token in code), None)
    if refused is not None:
        raise CategoryDefinitionError(f"the pattern may not hold {refused}")
    words = {w.upper() for w in _WORD.findall(code)}
    for word in ("CALL", "LOAD", "FOREACH", "UNION", "USE", "RETURN"):
        if word in words:
            raise CategoryDefinitionError(
                f"the pattern may not use {word}: a category is a MATCH pattern (with an "
                "optional WHERE) over `document`, never a procedure call or a statement")
    names = {name for _, _, name in _parameters(pattern)}
    if names - {"value"}:
        raise CategoryDefinitionError(
            f"the pattern's one parameter is $value; it uses "
            f"{', '.join('$' + n for n in sorted(names - {'value'}))}")
    if "value" not in names:
        raise CategoryDefinitionError("the pattern does not use $value: each value of the "
                                      "category must narrow it (NAME=value)")
    if "document" not in {w for w in _WORD.findall(code)}:
        raise CategoryDefinitionError("the pattern does not name `document`, the document "
                                      "that has the value")
    _check_brackets(code)
    return pattern


def _check_brackets(code: str) -> None:
    open_: list[str] = []
    for char in code:
        if char in "([{":
            open_.append(char)
        elif char in _CLOSING and (not open_ or open_.pop() != _CLOSING[char]):
            raise CategoryDefinitionError(f"the pattern's brackets do not balance at "
                                          f"{char!r}")
    if open_:
        raise CategoryDefinitionError(f"the pattern leaves {open_[-1]!r} open")


def _explained(db: Database, text: str, params: dict[str, Any]) -> str:
    """``EXPLAIN`` of ``text`` (nothing runs): the statement's query type.

    Raises:
        CategoryDefinitionError: it does not compile (the server's message).
    """
    def work(tx: ManagedTransaction) -> str:
        result = tx.run(prepared("EXPLAIN " + text), arguments(params))
        return str(result.consume().query_type)

    try:
        with db.session() as session:
            return session.execute_read(work)
    except Neo4jError as exc:
        raise CategoryDefinitionError(f"the pattern does not compile: {exc.message}") from exc


def define(db: Database, name: str, pattern: str) -> CategoryDefinition:
    """Store (or replace) the definition of ``name``, once checked (``check_name``,
    ``check_pattern``, read-only by ``EXPLAIN``) and not the name of a stored category.

    Raises:
        CategoryDefinitionError: the definition is refused.
    """
    definition = CategoryDefinition(check_name(name), check_pattern(pattern))
    kind = _explained(db, definition.statement(),
                      {"values": ["x"], "ontologyid": None, "datasetids": None})
    if kind != "r":
        raise CategoryDefinitionError(f"the pattern is not read-only (query type {kind!r})")
    if db.read("category_name_stored", name=definition.name)[0]["stored"]:
        raise CategoryDefinitionError(
            f"{definition.name!r} is a stored category name (ingested documents have it); "
            "choose another name for a graph-defined category")
    db.write("category_definition_store", name=definition.name, pattern=definition.pattern)
    return definition


def drop(db: Database, name: str) -> bool:
    """Remove the definition of ``name``; whether there was one."""
    rows = db.write("category_definition_drop", name=check_name(name))
    return bool(rows and rows[0]["dropped"])


def defined_names(db: Database) -> frozenset[str]:
    """The names of the stored definitions (their patterns not read)."""
    return frozenset(str(row["name"]) for row in db.read("category_definition_names"))


def definitions(db: Database, names: Sequence[str] | None = None
                ) -> dict[str, CategoryDefinition]:
    """The stored definitions (of ``names`` only, when given), by name; in the open read
    transaction of a query when there is one."""
    rows = db.read("category_definitions", names=None if names is None else list(names))
    return {row["name"]: CategoryDefinition(row["name"], row["pattern"]) for row in rows}
