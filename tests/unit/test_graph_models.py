"""The neomodel mirrors read the engine's graph: renaming a Python class (``FragmentNode`` beside
the engine's ``Fragment``) must not change the node labels it matches."""

from __future__ import annotations

import pytest

from thalabus_graph.graph import models

LABELS: dict[str, list[str]] = {
    "FragmentNode": ["Fragment"],
    "DocumentNode": ["Document"],
    "CategoryNode": ["Category"],
    "Chapter": ["Chapter", "Fragment"],
    "Paragraph": ["Paragraph", "Fragment"],
    "Summary": ["Summary", "Fragment"],
    "Question": ["Question", "Fragment"],
    "Keyword": ["Keyword", "Fragment"],
    "Ontology": ["Ontology"],
    "Dataset": ["Dataset"],
    "Goal": ["Goal"],
}
"""Every node class and the labels its nodes carry (the graph model of docs/architecture.md)."""


@pytest.mark.parametrize("name", sorted(LABELS))
def test_node_classes_keep_the_graph_labels(name: str) -> None:
    cls = getattr(models, name)
    assert cls.inherited_labels() == LABELS[name]


def test_no_model_class_shadows_an_engine_name() -> None:
    import thalabus_graph

    assert set(models.__all__).isdisjoint(thalabus_graph.__all__)
    assert {"Fragment", "Document", "Category"}.isdisjoint(models.__all__)
