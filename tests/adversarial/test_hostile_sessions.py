"""Hostile session names never reach Neo4j: a clear DatasetError, nothing written."""

from __future__ import annotations

import pytest

from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.errors import DatasetError
from thalabus_graph.graph.database import Database

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(("session", "message"), [
    ("s\ud800", "lone surrogate"),
    ("s" * 3000, "MAX_KEY_BYTES = 2048"),
    ("a#b", "no '#'"),
])
def test_a_hostile_session_name_is_refused_before_writing(
        clean_db: Database, session: str, message: str) -> None:
    graph = ThalabusGraph(clean_db, settings=Settings.from_env())
    graph.ingest([{"documentid": "hs-1", "categories": {"KIND": "x"}}], progress=False,
                 embed=False)
    with pytest.raises(DatasetError, match=message):
        graph.query("KIND=x", create_dataset=True, session=session)
    rows = clean_db.driver.execute_query("MATCH (d:Dataset) RETURN count(d) AS n",
                                         database_=clean_db.database).records
    assert rows[0]["n"] == 0
