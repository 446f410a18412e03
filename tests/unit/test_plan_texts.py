"""Plan labels: every subtree's canonical text from one serialisation, linear in the query."""

from __future__ import annotations

import time

from hypothesis import given

from tests.unit.test_query_properties import PROPERTY_SETTINGS, trees
from thalabus_graph.plan.texts import QueryTexts
from thalabus_graph.query import Node, parse, serialize, walk


@PROPERTY_SETTINGS
@given(trees)
def test_every_label_is_the_subtree_serialised(node: Node) -> None:
    texts = QueryTexts(node, width=10**9)
    assert texts.text == serialize(node)
    for sub in walk(node):
        assert texts.label(sub) == serialize(sub)


def test_long_labels_are_cut_and_marked() -> None:
    root = parse(" OR ".join(f"A={i}" for i in range(100)))
    label = QueryTexts(root, width=20).label(root)
    assert len(label) == 20 and label.endswith("…") and label.startswith("A=0 OR A=1")


def _seconds(terms: int) -> float:
    root = parse(" AND ".join(f"'t{i}'" for i in range(terms)))
    start = time.perf_counter()
    texts = QueryTexts(root)
    for sub in walk(root):
        texts.label(sub)
    return time.perf_counter() - start


def test_labelling_a_chain_grows_linearly() -> None:
    small, large = min(_seconds(5_000) for _ in range(3)), min(_seconds(50_000) for _ in range(3))
    assert large < small * 10 * 3, (small, large)  # quadratic would be ~100x
