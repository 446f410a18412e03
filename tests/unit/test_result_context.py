"""The pure parts of a query's graph context: the scan that refuses a context which could
reach outside its place in the engine's statement, or calls, loads or takes what a context
may not, before any server sees it; the columns read from its RETURN; the text that goes
into the statement; and the JSON form of the values Neo4j returns."""

from __future__ import annotations

import pytest
from neo4j.spatial import CartesianPoint, WGS84Point
from neo4j.time import Date, DateTime, Duration
from neo4j.vector import Vector, VectorDType

from thalabus_graph.errors import ConfigurationError, ContextError
from thalabus_graph.graph import cypher_library
from thalabus_graph.results.context import (
    CONTEXT_ROWS,
    checked,
    json_value,
    quoted,
    return_columns,
    scan,
    where,
)

READERS = "MATCH (document)<-[:CAN_READ]-(u:User) RETURN u.name AS reader"


def refusal(text: object) -> str:
    with pytest.raises(ContextError) as caught:
        checked(text)
    return str(caught.value)


def test_a_context_error_is_bad_input() -> None:
    assert issubclass(ContextError, ConfigurationError)
    assert issubclass(ContextError, ValueError)
    assert CONTEXT_ROWS == 20


def test_a_plain_context_passes_with_its_columns_in_order() -> None:
    assert checked(READERS) == (READERS, ["reader"])
    text = ("OPTIONAL MATCH (document)-[:CITES]->(d:Decision)\n"
            "RETURN d.title AS cites, d AS node, count { (d)--() } AS degree")
    assert checked(text) == (text, ["cites", "node", "degree"])


@pytest.mark.parametrize("text", ["", "   \n\t", "// only a comment", "/* nothing */"])
def test_an_empty_context_is_refused(text: str) -> None:
    assert "the context is empty" in refusal(text)


def test_a_context_that_is_no_text_is_refused() -> None:
    assert "Cypher text, not NoneType" in refusal(None)


@pytest.mark.parametrize(("text", "said"), [
    # closing the subquery the context sits in, then writing and reopening one
    ("RETURN 1 AS a } MATCH (n) DETACH DELETE n WITH 1 AS z CALL { RETURN 2 AS b",
     "closes a bracket `}` it did not open (at line 1, column 15)"),
    ("RETURN 1 AS a\n}", "closes a bracket `}` it did not open (at line 2, column 1)"),
    ("RETURN 1 AS a)", "closes a bracket `)`"),
    ("RETURN {a: 1 AS a", "leaves `{` open (at line 1, column 8)"),
    ("RETURN [1, (2] AS a", "closes `(` with `]`"),
    ("RETURN 1 AS a; MATCH (n) DETACH DELETE n", "holds `;`"),
    ("RETURN 'a\\' } ' AS a }", "closes a bracket `}`"),  # the escaped quote stays inside
    ("RETURN 'open AS a", "ends inside a string (at line 1, column 8)"),
    ('RETURN "open\\" AS a', "ends inside a string"),
    ("RETURN 1 AS `open", "ends inside a `quoted` name"),
    ("RETURN 1 AS a /* } MATCH (n) DELETE n", "ends inside a /* comment */"),
    ("RETURN 1 AS a\u200b", "the control or invisible character U+200B"),
    ("CALL\u200bdb.labels() YIELD label RETURN label", "U+200B"),
    ("RETURN 1 AS a\x00", "U+0000"),
])
def test_a_context_that_could_leave_its_slot_is_refused(text: str, said: str) -> None:
    assert said in refusal(text)


@pytest.mark.parametrize("text", [
    "RETURN '}' AS a, \"{\" AS b, '//' AS c, '/*' AS d, ';' AS e",
    "RETURN 1 AS `a}``b;`",
    "RETURN 1 AS a // } MATCH (n) DETACH DELETE n",
    "RETURN 1 AS a /* } ; CALL db.labels() */",
    "RETURN 1 AS a // a line comment ends at a newline only\u2028 CALL db.labels()",
    "RETURN 'it\\'s' AS a, \"say \\\"hi\\\"\" AS b",
    "MATCH (document)-[:CITES]->(d) WHERE d.year > 2000 RETURN collect { RETURN 1 } AS a",
])
def test_brackets_quotes_and_comments_inside_strings_names_and_comments_pass(text: str) -> None:
    checked(text)


@pytest.mark.parametrize("text", [
    "CALL db.labels() YIELD label RETURN label",
    "call db.labels() yield label return label",
    "CALL\u00a0db.labels() YIELD label RETURN label",
    "CALL /* hidden */ db.labels() YIELD label RETURN label",
    "CALL `db`.labels() YIELD label RETURN label",
    "OPTIONAL CALL thalabus.version() YIELD version RETURN version",
    "CALL (document) { CALL db.labels() YIELD label RETURN label } RETURN label",
    "MATCH (document) CALL apoc.cypher.run('MATCH (n) RETURN n', {}) YIELD value "
    "RETURN value",
])
def test_a_procedure_call_is_refused(text: str) -> None:
    assert "calls a procedure" in refusal(text)


@pytest.mark.parametrize("text", [
    "CALL (document) { MATCH (document)--(x) RETURN x } RETURN x.name AS name",
    "CALL { RETURN 1 AS one } RETURN one",
    "OPTIONAL CALL (document) { MATCH (document)--(x) RETURN x } RETURN x AS node",
    "MATCH (n:CALL) RETURN n.call AS c, {call: 1} AS m",
])
def test_subqueries_and_names_spelled_call_pass(text: str) -> None:
    checked(text)


@pytest.mark.parametrize(("text", "said"), [
    ("LOAD CSV FROM 'file:///etc/passwd' AS line RETURN line", "loads a file (LOAD CSV)"),
    ("load csv with headers from 'https://example.org/x.csv' AS l RETURN l", "LOAD CSV"),
    ("USE system RETURN 1 AS a", "selects a graph (USE)"),
    ("CALL { USE other.db MATCH (n) RETURN n } RETURN n", "selects a graph"),
    ("CYPHER 5 RETURN 1 AS a", "begins with CYPHER"),
    ("CYPHER runtime=parallel MATCH (n) RETURN n", "begins with CYPHER"),
    ("EXPLAIN RETURN 1 AS a", "begins with EXPLAIN"),
    ("profile RETURN 1 AS a", "begins with PROFILE"),
])
def test_loading_files_other_graphs_and_statement_options_are_refused(text: str,
                                                                      said: str) -> None:
    assert said in refusal(text)


@pytest.mark.parametrize("text", [
    "MATCH (document) WHERE document.title = $title RETURN document.title AS t",
    "RETURN $`odd name` AS a",
    "RETURN $0 AS a",
    "RETURN a$b AS c",
])
def test_a_parameter_is_refused(text: str) -> None:
    assert "uses a parameter: a context takes none" in refusal(text)


def test_a_dollar_in_a_quoted_name_is_refused() -> None:
    assert "has `$` in a quoted name" in refusal("RETURN 1 AS `a$b`")


def test_a_dollar_in_a_string_reaches_the_server_as_written() -> None:
    """The engine reads ``$name`` as its own parameter everywhere in a statement; inside a
    string the ``$`` goes as the escape \\u0024, which Neo4j reads as ``$``."""
    body, _ = checked("RETURN 'costs $usd' AS a, \"\\$x\" AS b, '\\\\$y' AS c")
    assert body == ("RETURN 'costs \\u0024usd' AS a, \"\\\\\\u0024x\" AS b, "
                    "'\\\\\\u0024y' AS c")
    assert cypher_library.PARAMETER.search(body) is None


@pytest.mark.parametrize("name", ["document", "fragment"])
def test_a_column_named_like_a_variable_the_context_sees_is_refused(name: str) -> None:
    assert f"returns a column named `{name}`" in refusal(f"RETURN {name}")
    assert f"returns a column named `{name}`" in refusal(f"MATCH (x) RETURN x AS `{name}`")


@pytest.mark.parametrize(("text", "columns"), [
    ("RETURN a", ["a"]),
    ("RETURN DISTINCT b, a ORDER BY a LIMIT 3", ["b", "a"]),
    ("RETURN x.name AS z, count(*) AS `c``d`, [y IN l | y] AS a SKIP 1", ["z", "c`d", "a"]),
    ("RETURN CASE WHEN 1 > 0 THEN 1 ELSE 2 END AS pick", ["pick"]),
    ("CALL (document) { RETURN 1 AS inner } RETURN inner AS outer", ["outer"]),
    ("RETURN 1 AS b, 2 AS a UNION RETURN 3 AS b, 4 AS a", ["b", "a"]),
    ("MATCH (x) RETURN *", None),
    ("MATCH (x) RETURN x.name", None),
    ("MATCH (x) FINISH", None),
])
def test_the_columns_are_read_from_the_first_top_level_return(text: str,
                                                              columns: list[str] | None
                                                              ) -> None:
    assert return_columns(scan(text)) == columns


def test_where_names_lines_and_columns_from_one() -> None:
    assert where("ab\ncd", 0) == "line 1, column 1"
    assert where("ab\ncd", 4) == "line 2, column 2"
    assert where("ab", 99) == "line 1, column 3"


def test_quoted_doubles_backticks() -> None:
    assert quoted("a`b c") == "`a``b c`"


def test_values_become_json() -> None:
    assert json_value(Date(2001, 2, 3)) == "2001-02-03"
    assert json_value(DateTime(2020, 1, 2, 3, 4, 5)) == "2020-01-02T03:04:05.000000000"
    assert json_value(Duration(days=1, hours=2)) == "P1DT2H"
    assert json_value(CartesianPoint((1, 2))) == "point({srid: 7203, x: 1.0, y: 2.0})"
    assert (json_value(WGS84Point((12.5, 41.9, 20)))
            == "point({srid: 4979, x: 12.5, y: 41.9, z: 20.0})")
    assert json_value(b"\x00\xff") == "AP8="
    assert json_value(Vector([1.0, 2.5], VectorDType.F64)) == [1.0, 2.5]
    assert json_value({"d": [Date(2001, 2, 3), None, True, 1.5]}) == {
        "d": ["2001-02-03", None, True, 1.5]}
