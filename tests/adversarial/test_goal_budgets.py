"""A goal context's budgets and target are held to the range of the setting each stands in for.

A budget past that range is no budget anyone means, and past 2**63 it no longer fits the 64-bit
integers Neo4j takes as parameters: the driver would fail while packing it. Such a number is
bad input, refused before the graph is read (the CLI exits 2), like NaN or a negative one.
"""

from __future__ import annotations

import pytest

from tests.adversarial.conftest import HashEmbedder
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.cli import main
from thalabus_graph.errors import ConfigurationError
from thalabus_graph.graph.database import Database

pytestmark = pytest.mark.integration

PAST_INT64 = 10**20
"""A whole number the CLI's ``int`` accepts and no Neo4j parameter can hold."""


def _graph(db: Database) -> ThalabusGraph:
    settings = Settings.from_env()
    return ThalabusGraph(db, settings=settings,
                         embedder=HashEmbedder(settings.embedding_dimensions))


@pytest.mark.parametrize("name", ["char_budget", "loaded_budget", "target"])
@pytest.mark.parametrize("value", [PAST_INT64, 2**63, 1_000_000_001])
def test_a_budget_past_its_settings_range_is_refused(clean_db: Database, name: str,
                                                     value: int) -> None:
    with pytest.raises(ConfigurationError, match=rf"{name} must be a whole number from"):
        _graph(clean_db).goal_context("g-range", **{name: value})  # type: ignore[arg-type]


@pytest.mark.parametrize("flag", ["--char-budget", "--loaded-budget", "--target"])
def test_the_cli_refuses_a_budget_past_int64_as_bad_input(
        clean_db: Database, neo4j_uri: str, flag: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["goal", "show", "g-range", flag, str(PAST_INT64), "--uri", neo4j_uri,
                 "--database", clean_db.database])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("error: ") and "must be a whole number from" in err, err
    assert "unexpected" not in err
