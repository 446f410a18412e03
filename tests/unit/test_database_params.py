"""Parameters handed to the driver keep their values and have a short ``repr``: the driver
formats every statement's parameters with ``repr`` for its debug log even when that log is
off, which costs about a microsecond a number (seconds for an ingest batch of embeddings).
A statement reads them from one map parameter (``prepared``, ``arguments``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from thalabus_graph.graph.database import ARGUMENTS, STATEMENT_OPTIONS, arguments, prepared, sent

values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                      | st.text(max_size=5),
                      lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                      max_leaves=12)


@given(st.dictionaries(st.text(max_size=6), values, max_size=5))
def test_the_values_sent_are_the_values_given(params: dict[str, object]) -> None:
    out = sent(params)
    assert out == params and list(out) == list(params)
    for key, value in params.items():
        assert isinstance(out[key], type(value))


def test_a_long_list_prints_as_its_length() -> None:
    rows = [{"fragmentid": f"f{i}", "embedding": [0.123456789] * 384} for i in range(2000)]
    params = {"rows": rows, "vector": [0.5] * 384, "k": 10, "ids": {"a": 1}}
    # the nested rows and numbers are never formatted
    assert repr(sent(params)) == ("{'rows': <list of 2000>, 'vector': <list of 384>, "
                                  "'k': 10, 'ids': <map of 1>}")
    assert sent(None) == {}


def test_a_prepared_statement_reads_every_parameter_from_the_one_map() -> None:
    text = "MATCH (d:Document {documentid: $documentid})\nWHERE $ids IS NULL OR d.x IN $ids_2"
    out = prepared(text)
    assert out.splitlines()[0] == STATEMENT_OPTIONS
    assert out.splitlines()[1:] == [
        f"MATCH (d:Document {{documentid: ${ARGUMENTS}.documentid}})",
        f"WHERE ${ARGUMENTS}.ids IS NULL OR d.x IN ${ARGUMENTS}.ids_2"]
    profiled = prepared("PROFILE CYPHER 25\nRETURN $k")
    assert profiled.endswith(f"PROFILE CYPHER 25\nRETURN ${ARGUMENTS}.k")


@given(st.dictionaries(st.text(max_size=6), values, max_size=5))
def test_the_one_map_holds_the_values_given_and_prints_short(params: dict[str, object]) -> None:
    out = arguments(params)
    assert list(out) == [ARGUMENTS] and out[ARGUMENTS] == params
    assert repr(out) == f"{{'{ARGUMENTS}': <map of {len(params)}>}}"
