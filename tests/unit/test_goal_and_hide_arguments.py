"""Arguments of the goal and dataset calls that change the graph are checked before any
statement runs: a lone string where Fragment objects are wanted, no member ids at all."""

from __future__ import annotations

from typing import Any, cast

import pytest

from thalabus_graph.datasets import Datasets
from thalabus_graph.errors import ConfigurationError
from thalabus_graph.goals import Goals
from thalabus_graph.settings import Settings

NO_DATABASE = cast(Any, None)
"""Nothing may reach the database: an argument error is raised before any statement."""


def _goals() -> Goals:
    settings = Settings.from_env()
    return Goals(NO_DATABASE, settings, Datasets(NO_DATABASE, settings))


@pytest.mark.parametrize("given", ["docid-1-c1", ["docid-1-c1"], [1.5], [None]])
def test_goal_fragments_that_are_not_fragments_are_refused(given: Any) -> None:
    with pytest.raises(ConfigurationError, match="Fragment or Member"):
        _goals().add_fragments("g1", given)


def test_hiding_without_member_ids_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="member ids must be given"):
        Datasets(NO_DATABASE, Settings.from_env()).hide("s#dataset_1", cast(Any, None))
