"""An argument a tool does not have gets the one it most likely means."""

from __future__ import annotations

import pytest

from thalabus_graph.mcp.server import suggested

QUERY_ARGUMENTS = frozenset({"query", "ontology_id", "subset_of_datasetids", "limit",
                             "create_dataset", "context", "offset"})


@pytest.mark.parametrize(("given", "meant"), [
    ("text", "query"), ("question", "query"), ("top_k", "limit"), ("ontology", "ontology_id"),
    ("within_datasets", "subset_of_datasetids"), ("limt", "limit"), ("contxt", "context"),
])
def test_an_unknown_argument_gets_what_it_most_likely_means(given: str, meant: str) -> None:
    assert suggested(given, QUERY_ARGUMENTS) == meant


def test_a_renamed_argument_the_tool_lacks_gets_no_suggestion_of_it() -> None:
    assert suggested("dataset", frozenset({"query"})) is None
