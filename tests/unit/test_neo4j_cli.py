"""What ``thalabus-graph neo4j start`` tells the user beside the URI."""

from __future__ import annotations

from thalabus_graph.cli.neo4j_cmd import WARM_UP_HINT_STORE, warm_up_hint


def test_a_start_on_a_store_with_data_says_how_to_warm_up() -> None:
    assert warm_up_hint(0) == warm_up_hint(WARM_UP_HINT_STORE - 1) == ""  # a new store
    assert "`thalabus-graph warm-up`" in warm_up_hint(WARM_UP_HINT_STORE)
