"""An ingest batch larger than the server's transaction memory is written in smaller
transactions, whole, with nothing lost, and at once: the driver does not retry the refused
batch first (a server of its own with a small limit)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.corpora import with_vectors
from thalabus_graph import Settings, ThalabusGraph, warm_up
from thalabus_graph.graph.launcher import LTS_VERSION, LocalNeo4j

pytestmark = [pytest.mark.integration, pytest.mark.fixed_version]

DOCUMENTS = 1200


@pytest.fixture(scope="module")
def small_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The Bolt URI of a 5.26 server whose transactions together may use 24 MiB."""
    local = LocalNeo4j(version=LTS_VERSION, data_dir=tmp_path_factory.mktemp("txmem"),
                       transaction_memory="24m", exit_with_parent=True)
    uri = local.start()
    try:
        yield uri
    finally:
        local.stop()


def documents(n: int) -> list[dict[str, Any]]:
    return with_vectors("mem", n, ("k0", "k1", "k2"), seed=11)


def test_a_batch_the_transaction_memory_cannot_hold_is_written_in_halves(
        small_server: str, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The warm-up after a load this size is test_warm_up's subject; here it would only spend
    # about 40 s planning every query form on a fresh server.
    monkeypatch.setattr(warm_up, "MIN_DOCUMENTS", DOCUMENTS + 1)
    settings = Settings(write_batch_size=100_000)  # every document in one first batch
    with ThalabusGraph.connect(small_server, settings=settings) as graph:
        graph.migrate()
        with caplog.at_level(logging.INFO, logger="thalabus_graph.ingest"), \
                caplog.at_level(logging.INFO, logger="neo4j"):  # and the driver's warnings
            report = graph.ingest(documents(DOCUMENTS), embed=False, progress=False)
        assert not report.errors
        assert report.documents == DOCUMENTS
        assert any("two transactions" in r.getMessage() for r in caplog.records)
        retried = [r.getMessage() for r in caplog.records if "will be retried" in r.getMessage()]
        assert not retried  # a refused batch is split, not retried for 30 s
        chapters = graph.db.driver.execute_query(
            "MATCH (c:Chapter) RETURN count(c) AS n, count(DISTINCT c.fragmentid) AS ids",
            database_=graph.db.database).records[0]
        assert chapters["n"] == chapters["ids"] == DOCUMENTS
