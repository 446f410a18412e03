"""The graph context of a query's results: rows a user's read-only Cypher reads per result.

A query given ``context=CYPHER`` attaches to each result the rows of that query part, which
sees the result's ``document`` (the ``:Document`` node) and ``fragment`` (its ``:Fragment``
node, null for a document result), e.g. ``MATCH (document)<-[:CAN_READ]-(u:User) RETURN
u.name AS reader``. The text is the user's and goes into a statement of the engine, so
``GraphContext.compile`` refuses, before anything runs: text that could leave its place in
the statement (an unbalanced bracket, ``;``, an unclosed string or comment, a control
character), parameters, procedure calls, ``LOAD CSV`` and ``USE``, which the token scan
here finds; then a fragment that does not compile or is not read-only, which the server
decides (EXPLAIN's query type must be ``r``: keywords alone miss writes the planner sees).
``GraphContext.rows`` reads the context of many results in one statement, at most ``cap``
rows each, inside the query's open read transaction when there is one (and so within its
time budget).
"""

from __future__ import annotations

import base64
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from neo4j import ManagedTransaction
from neo4j.exceptions import Neo4jError
from neo4j.graph import Node, Path, Relationship
from neo4j.spatial import Point
from neo4j.time import Date, DateTime, Duration, Time
from neo4j.vector import Vector

from thalabus_graph.errors import ContextError, GraphError
from thalabus_graph.graph import cypher_library
from thalabus_graph.graph.database import Database, arguments, prepared

CONTEXT_ROWS = 20
"""Rows of context kept per result by default. A context runs for every result of a query
(up to a few hundred), and a pattern like "who can read this document" can fan out to
thousands of rows on one well-connected node: 20 rows a result keep the answer sized like
the results themselves (a few thousand rows at most) while the contexts a result carries in
practice (its readers, the decisions it cites) fit whole. The cap is per result, so one
hub result cannot crowd out the context of the others."""
SEEN = ("document", "fragment")
"""The variables a context sees; a column of the context cannot take either name."""
SERVER_STATEMENT_ERRORS = "Neo.ClientError.Statement."
"""Neo4j's error codes for a statement that is wrong (syntax, semantics, types, arithmetic)."""
QUERY_TYPES = {"w": "a write", "rw": "a read-write", "s": "a schema"}
_LOCATION = re.compile(r"\s*\(line \d+, column \d+ \(offset: (\d+)\)\)")
_MARK = "\x00context\x00"


@dataclass(frozen=True)
class Token:
    """A token of a context's text: ``kind`` is ``name`` (a bare word: keyword, variable,
    function), ``quoted`` (a backtick-quoted name, ``value`` unquoted), ``string``,
    ``number`` or ``punct`` (one character); ``start``/``end`` index the text."""

    kind: str
    value: str
    start: int
    end: int

    def word(self, *words: str) -> bool:
        """Whether this is a bare word, any letter case, among ``words`` (any with none)."""
        return self.kind == "name" and (not words or self.value.upper() in words)


def where(text: str, offset: int) -> str:
    """``line L, column C`` (1-based) of ``offset`` in ``text``."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    return f"line {line}, column {offset - (text.rfind(chr(10), 0, offset) + 1) + 1}"


def _refuse(text: str, offset: int, message: str) -> NoReturn:
    raise ContextError(f"the context {message} (at {where(text, offset)})")


def _is_name_char(ch: str) -> bool:
    """A character Neo4j reads as part of a bare name (letters, digits, ``_``, currency
    signs and connecting or combining marks; ``$`` is a parameter and refused first)."""
    return ch == "_" or ch.isalnum() or unicodedata.category(ch) in ("Sc", "Pc", "Mn", "Mc")


def _string_end(text: str, start: int) -> int:
    """The index after the string literal opening at ``start`` (a backslash takes the next
    character with it, as in Neo4j's lexer)."""
    quote, i = text[start], start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == quote:
            return i + 1
        else:
            i += 1
    _refuse(text, start, "ends inside a string")


def _quoted_end(text: str, start: int) -> int:
    """The index after the backtick-quoted name opening at ``start`` (a doubled backtick is
    one backtick; a backslash is itself, as in Neo4j's lexer)."""
    i = start + 1
    while True:
        i = text.find("`", i)
        if i == -1:
            _refuse(text, start, "ends inside a `quoted` name")
        if text.startswith("``", i):
            i += 2
            continue
        return i + 1


def _skipped(text: str, i: int) -> int:
    """The index after whitespace or a comment at ``i`` (``i`` when there is none); a line
    comment ends at ``\\n`` or ``\\r``, where Neo4j ends it (not at other line breaks)."""
    if text[i].isspace():
        return i + 1
    if text.startswith("//", i):
        ends = [j for j in (text.find("\n", i), text.find("\r", i)) if j != -1]
        return min(ends, default=len(text))
    if text.startswith("/*", i):
        end = text.find("*/", i + 2)
        if end == -1:
            _refuse(text, i, "ends inside a /* comment */")
        return end + 2
    return i


def _bracket(text: str, i: int, stack: list[int]) -> None:
    """Track the brackets: a closing one must close the last one opened in the context, so
    the context never closes the subquery it is placed in."""
    ch = text[i]
    if ch in "([{":
        stack.append(i)
    elif ch in ")]}":
        if not stack:
            _refuse(text, i, f"closes a bracket `{ch}` it did not open")
        opened = text[stack.pop()]
        if "([{".index(opened) != ")]}".index(ch):
            _refuse(text, i, f"closes `{opened}` with `{ch}`")


def scan(text: str) -> list[Token]:
    """The tokens of a context's text, refusing what could reach outside its place in the
    engine's statement: an unclosed string, quoted name or comment, an unbalanced bracket,
    ``;``, a parameter, a ``$`` in a quoted name (the engine reserves ``$`` for its own
    parameters) and a control or invisible character outside strings (Neo4j's lexer reads
    some of them as part of a name, which would hide a keyword from this scan)."""
    tokens: list[Token] = []
    stack: list[int] = []
    i = 0
    while i < len(text):
        if (after := _skipped(text, i)) != i:
            i = after
            continue
        ch = text[i]
        if ch in "'\"":
            end = _string_end(text, i)
            tokens.append(Token("string", text[i:end], i, end))
        elif ch == "`":
            end = _quoted_end(text, i)
            if "$" in text[i:end]:
                _refuse(text, i, "has `$` in a quoted name, which the engine keeps for its "
                        "parameters")
            tokens.append(Token("quoted", text[i + 1:end - 1].replace("``", "`"), i, end))
        elif ch == "$":
            _refuse(text, i, "uses a parameter: a context takes none; write the values into "
                    "it")
        elif ch == ";":
            _refuse(text, i, "holds `;`: a context is one query part, not statements")
        elif _is_name_char(ch):
            end = i + 1
            while end < len(text) and text[end] != "$" and _is_name_char(text[end]):
                end += 1
            kind = "number" if ch.isdigit() else "name"
            tokens.append(Token(kind, text[i:end], i, end))
        elif unicodedata.category(ch).startswith("C"):
            _refuse(text, i, f"holds the control or invisible character U+{ord(ch):04X} "
                    "outside a string")
        else:
            _bracket(text, i, stack)
            end = i + 1
            tokens.append(Token("punct", ch, i, end))
        i = end
    if stack:
        _refuse(text, stack[-1], f"leaves `{text[stack[-1]]}` open")
    return tokens


def _refuse_clauses(text: str, tokens: Sequence[Token]) -> None:
    """Refuse the clauses a context may not hold whatever the server plans: a procedure
    ``CALL`` (CALL and a name; a subquery ``CALL (...) { }`` or ``CALL { }`` is Cypher and
    allowed; a variable named ``call`` before another word is refused too), ``LOAD
    CSV`` (it reads files and URLs, yet plans as a read), ``USE`` (another graph) and a
    leading ``CYPHER``, ``EXPLAIN`` or ``PROFILE`` (options of the engine's statement)."""
    if tokens and tokens[0].word("CYPHER", "EXPLAIN", "PROFILE"):
        _refuse(text, 0, f"begins with {tokens[0].value.upper()}: query options, EXPLAIN "
                "and PROFILE belong to the engine's statement")
    for index, token in enumerate(tokens):
        before = tokens[index - 1] if index else None
        after = tokens[index + 1] if index + 1 < len(tokens) else None
        if (not token.word("CALL", "LOAD", "USE")
                or (before is not None and before.kind == "punct" and before.value in ".:")
                or (after is not None and after.kind == "punct" and after.value == ":")):
            continue  # a property, label or map key of that name, not a clause
        if token.word("CALL") and after is not None and after.kind in ("name", "quoted"):
            _refuse(text, token.start, "calls a procedure (CALL followed by a name): a "
                    "context is Cypher only; subqueries CALL (...) { ... } and CALL { ... } "
                    "are allowed")
        if token.word("LOAD") and after is not None and after.word("CSV"):
            _refuse(text, token.start, "loads a file (LOAD CSV): a context reads the graph "
                    "only")
        if token.word("USE") and after is not None and after.kind in ("name", "quoted"):
            _refuse(text, token.start, "selects a graph (USE): a context reads the query's "
                    "own database")


def _slot_text(text: str, tokens: Sequence[Token]) -> str:
    """``text`` as it goes into the engine's statement: every ``$`` inside a string written
    as the escape ``\\u0024``, so the engine's parameter rewriting (``database.prepared``)
    leaves the string as the user wrote it."""
    pieces: list[str] = []
    last = 0
    for token in tokens:
        if token.kind != "string" or "$" not in token.value:
            continue
        pieces += [text[last:token.start], cypher_library.inert_dollars(token.value)]
        last = token.end
    return "".join([*pieces, text[last:]])


def return_columns(tokens: Sequence[Token]) -> list[str] | None:
    """The column names of the context's first top-level RETURN, in the user's order (the
    server lists a subquery's columns sorted); None when they cannot be read from the text
    alone (``RETURN *``, no RETURN), and the server's order is used."""
    depth, start = 0, None
    for index, token in enumerate(tokens):
        if token.kind == "punct" and token.value in "([{)]}":
            depth += 1 if token.value in "([{" else -1
        elif depth == 0 and token.word("RETURN"):
            start = index + 1
            break
    if start is None:
        return None
    items: list[list[Token]] = [[]]
    for token in tokens[start:]:
        if depth == 0 and token.word("ORDER", "SKIP", "OFFSET", "LIMIT", "UNION"):
            break
        if token.kind == "punct" and token.value in "([{)]}":
            depth += 1 if token.value in "([{" else -1
        if depth == 0 and token.kind == "punct" and token.value == ",":
            items.append([])
        else:
            items[-1].append(token)
    if items[0] and items[0][0].word("DISTINCT"):
        items[0] = items[0][1:]
    names: list[str] = []
    for item in items:
        if len(item) >= 3 and item[-2].word("AS") and item[-1].kind in ("name", "quoted"):
            names.append(item[-1].value)
        elif len(item) == 1 and item[0].kind in ("name", "quoted"):
            names.append(item[0].value)
        else:
            return None
    return names


def checked(cypher: object) -> tuple[str, list[str] | None]:
    """A context's text as it goes into the statement, and its columns as the text names
    them (``return_columns``), after every refusal that needs no server."""
    if not isinstance(cypher, str):
        raise ContextError(f"the context is Cypher text, not {type(cypher).__name__}")
    text = cypher.strip()
    tokens = scan(text)
    if not tokens:
        raise ContextError("the context is empty: give a read-only Cypher query part over "
                           "`document` and `fragment` that ends in RETURN, e.g. MATCH "
                           "(document)<-[:CAN_READ]-(u:User) RETURN u.name AS reader")
    _refuse_clauses(text, tokens)
    named = return_columns(tokens)
    for name in named or ():
        if name in SEEN:
            raise ContextError(f"the context returns a column named `{name}`, a variable it "
                               f"sees: name the column otherwise (RETURN {name} AS node)")
    return _slot_text(text, tokens), named


def quoted(name: str) -> str:
    """``name`` as a backtick-quoted Cypher name."""
    return "`" + name.replace("`", "``") + "`"


def server_message(error: Neo4jError, start: int | None = None, text: str = "") -> str:
    """The server's message on a statement carrying the context ``text`` from index ``start``
    of the statement as sent: a location moved into the context (left out without ``start``
    or outside the context), the display of the whole statement left out (the wrapping is
    the engine's)."""
    lines = [line for line in (error.message or str(error)).splitlines()
             if line.strip() and not line.startswith('"') and line.strip() != "^"]
    message = " ".join(line.strip() for line in lines) or (error.code or "error")

    def moved(match: re.Match[str]) -> str:
        if start is None or not 0 <= int(match.group(1)) - start <= len(text):
            return ""
        return f" (at {where(text, int(match.group(1)) - start)})"

    return _LOCATION.sub(moved, message)


def _statement_error(error: GraphError) -> Neo4jError | None:
    """The server's error behind ``error`` when it is about the statement itself (syntax,
    semantics, types, arithmetic), not the server, the connection or the time budget."""
    cause = error.__cause__
    if isinstance(cause, Neo4jError) and (cause.code or "").startswith(SERVER_STATEMENT_ERRORS):
        return cause
    return None


def _explained(tx: ManagedTransaction, statement: str,
               params: dict[str, Any]) -> tuple[list[str], str]:
    """The columns and query type Neo4j plans ``statement`` with, from its EXPLAIN."""
    result = tx.run(prepared("EXPLAIN " + statement), arguments(params))
    keys = list(result.keys())
    return keys, str(result.consume().query_type)


def _sent_start(name: str, **slots: str) -> int:
    """Where the ``context`` slot of statement ``name`` begins in its EXPLAIN as sent."""
    return prepared("EXPLAIN " + cypher_library.fill(name, context=_MARK, **slots)).index(_MARK)


@dataclass(frozen=True)
class GraphContext:
    """A compiled graph context: the user's ``cypher``, its ``columns`` in order, the
    ``statement`` that reads it for many results and ``cap``, the most rows per result.

    Example:
        >>> context = GraphContext.compile(db, "MATCH (document)<-[:CAN_READ]-(u:User) "
        ...                                "RETURN u.name AS reader")  # doctest: +SKIP
        >>> context.rows(db, [("docid-1", None), ("docid-2", "docid-2-c1")])  # doctest: +SKIP
        [[{'reader': 'ann'}, {'reader': 'bob'}], []]
    """

    cypher: str
    columns: tuple[str, ...]
    statement: str
    cap: int

    @classmethod
    def of(cls, db: Database, cypher: str | None) -> GraphContext | None:
        """``compile`` of ``cypher`` with the default cap; None when no context is asked."""
        return None if cypher is None else cls.compile(db, cypher)

    @classmethod
    def compile(cls, db: Database, cypher: str, *, cap: int = CONTEXT_ROWS) -> GraphContext:
        """Check ``cypher`` and build the statement that reads it, before anything runs.

        The text is scanned first (``checked``); then the server plans it, by EXPLAIN in a
        read transaction of its own (a failing EXPLAIN inside the query's transaction would
        end that transaction): the planned query type must be ``r`` and the context must
        return columns, whose names the plan gives.

        Raises:
            ContextError: the context is refused; the message says why, with the server's
                message when it does not compile.
        """
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
            raise ContextError(f"cap is the most context rows per result, a whole number of "
                               f"at least 1, not {cap!r}")
        body, named = checked(cypher)
        text = cypher.strip()
        probe = cypher_library.fill("result_context_columns", context=body)
        keys, query_type = cls._explain(db, probe, {}, _sent_start("result_context_columns"), text)
        cls._check_type(query_type)
        server = [key for key in keys if key not in SEEN]
        if not server:
            raise ContextError("the context returns no columns: end it with RETURN and name "
                               "each value (RETURN u.name AS reader)")
        columns = tuple(named if named is not None and sorted(named) == sorted(server)
                        else server)
        listed = ",\n".join(f"    {quoted(c)}" for c in columns)
        statement = cypher_library.fill("result_context", context=body, columns=listed)
        keys, query_type = cls._explain(db, statement, {"targets": [], "cap": cap},
                                        _sent_start("result_context", columns=listed), text)
        cls._check_type(query_type)
        if keys != ["index", "row"]:
            raise ContextError(f"the context changes the columns of the engine's statement "
                               f"({', '.join(keys)})")
        return cls(text, columns, statement, cap)

    @staticmethod
    def _explain(db: Database, statement: str, params: dict[str, Any], start: int,
                 text: str) -> tuple[list[str], str]:
        """EXPLAIN ``statement`` in a read transaction of its own; a statement Neo4j refuses
        becomes a ``ContextError`` with the server's message."""
        try:
            return db.read_tx(lambda tx: _explained(tx, statement, params), what="context")
        except GraphError as exc:
            if (cause := _statement_error(exc)) is not None:
                message = server_message(cause, start, text)
                seen = any(f"`{name}`" in message for name in SEEN)
                hint = (" (`document` and `fragment` are the variables a context sees: give "
                        "other values other names)" if seen else
                        " (name each column: RETURN u.name AS reader)"
                        if "must be aliased" in message else "")
                raise ContextError(f"the context does not compile: {message}{hint}") from cause
            raise

    @staticmethod
    def _check_type(query_type: str) -> None:
        if query_type != "r":
            kind = QUERY_TYPES.get(query_type, f"a {query_type!r}")
            raise ContextError(f"the context writes to the graph (Neo4j plans it as {kind} "
                               "query): a context may only read; no CREATE, MERGE, SET, "
                               "DELETE, REMOVE or FOREACH")

    def rows(self, db: Database, targets: Sequence[tuple[str, str | None]]
             ) -> list[list[dict[str, Any]]]:
        """The context rows of each target (a result's document id and fragment id, None for
        a document result), in the order of ``targets``: at most ``cap`` rows each, each row
        a dict of the columns in order with JSON-able values (``json_value``); an empty list
        for a target whose document is not in the graph or whose context has no row.

        One statement for all targets, run with ``Database.read_text``: in this thread's open
        ``one_read`` transaction when there is one, so it is bounded by the query's time
        budget (``QueryTimeout``). A context failing on the data (a type or arithmetic
        error) raises ``ContextError`` with the server's message."""
        if not targets:
            return []
        params = {"targets": [{"index": index, "documentid": documentid,
                               "fragmentid": fragmentid}
                              for index, (documentid, fragmentid) in enumerate(targets)],
                  "cap": self.cap}
        try:
            records = db.read_text(self.statement, params, plain=True, what="context")
        except GraphError as exc:
            if (cause := _statement_error(exc)) is not None:
                raise ContextError(f"the context failed on the graph: "
                                   f"{server_message(cause)}") from cause
            raise
        out: list[list[dict[str, Any]]] = [[] for _ in targets]
        for record in records:
            values = [json_value(value) for value in record["row"]]
            out[record["index"]].append(dict(zip(self.columns, values, strict=True)))
        return out


def json_value(value: Any) -> Any:
    """A value Neo4j returned as JSON-able Python: a node is the dict of its properties, a
    relationship that dict with its ``type``, a path the list of its nodes, a temporal value
    its ISO 8601 text, a point the Cypher ``point({...})`` that makes it, bytes their base64
    text, a vector its list of numbers; lists and maps converted inside."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Node):
        return {key: json_value(item) for key, item in value.items()}
    if isinstance(value, Relationship):
        return {**{key: json_value(item) for key, item in value.items()}, "type": value.type}
    if isinstance(value, Path):
        return [json_value(node) for node in value.nodes]
    if isinstance(value, Date | Time | DateTime | Duration):
        return value.iso_format()
    if isinstance(value, Point):
        names = ("x", "y", "z")[:len(value)]
        coordinates = ", ".join(f"{name}: {float(v)!r}" for name, v in zip(names, value,
                                                                          strict=True))
        return f"point({{srid: {value.srid}, {coordinates}}})"
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, Vector):
        return [json_value(item) for item in value.to_native()]
    if isinstance(value, list | tuple):
        return [json_value(item) for item in value]
    if isinstance(value, dict):
        return {str(key): json_value(item) for key, item in value.items()}
    return str(value)
