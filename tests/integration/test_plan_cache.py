"""A statement the engine sends takes one place in Neo4j's plan cache whatever its parameters
hold (``graph/database.py`` ``prepared``): with plain parameters a list of another size class
or a null is another cache entry, planned anew (1-2 s for a search statement)."""

from __future__ import annotations

import re

import pytest

from thalabus_graph.graph.database import Database

pytestmark = [pytest.mark.integration, pytest.mark.schema_changes]  # it empties the plan cache


def _cleared(db: Database) -> int:
    """Empty the plan cache; the number of plans it held."""
    records, _, _ = db.driver.execute_query("CALL db.clearQueryCaches()", database_=db.database)
    match = re.search(r"cleared of (\d+) quer", str(records[0][0]))
    return int(match.group(1)) if match else 0


def test_one_statement_is_one_plan_whatever_its_parameters_hold(clean_db: Database) -> None:
    _cleared(clean_db)
    for documentids in ([], ["d-1"], ["d-1", "d-2", "d-3"], [f"d-{i}" for i in range(500)]):
        assert clean_db.read("document_languages", documentids=documentids) == []
    assert _cleared(clean_db) == 1
    # the same four calls with plain parameters: one plan per size class
    text = "MATCH (d:Document) WHERE d.documentid IN $documentids RETURN d.language"
    for documentids in ([], ["d-1"], ["d-1", "d-2", "d-3"], [f"d-{i}" for i in range(500)]):
        clean_db.driver.execute_query(text, documentids=documentids,
                                      database_=clean_db.database)
    assert _cleared(clean_db) > 1
