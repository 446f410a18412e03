"""Concurrent writers: dataset numbers allocated atomically, overlapping ingests serialised.

Eight threads against the real server; the fast variants run in ``make test``, the stress
variants repeat for a bounded time (<= 30 s of writing).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import pytest

from tests.adversarial.conftest import HashEmbedder
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.graph.database import Database

pytestmark = pytest.mark.integration
THREADS = 8
T = TypeVar("T")


def in_threads(work: Callable[[int], T]) -> tuple[list[T], list[BaseException]]:
    """Run ``work(thread_index)`` in THREADS threads started together; results and failures."""
    barrier = threading.Barrier(THREADS)

    def start(index: int) -> T:
        barrier.wait()
        return work(index)

    results: list[T] = []
    failures: list[BaseException] = []
    with ThreadPoolExecutor(THREADS) as pool:
        for future in [pool.submit(start, i) for i in range(THREADS)]:
            try:
                results.append(future.result())
            except Exception as exc:  # every failure is counted, none hidden
                failures.append(exc)
    return results, failures


def create_datasets_concurrently(db: Database, per_thread: int) -> None:
    graph = ThalabusGraph(db, settings=Settings.from_env())
    graph.ingest([{"documentid": f"race-{i}", "categories": {"KIND": "x"}} for i in range(3)],
                 progress=False, embed=False)

    def work(_: int) -> list[str]:
        return [graph.query("KIND=x", create_dataset=True, session="race").dataset_ids[0]
                for _ in range(per_thread)]

    results, failures = in_threads(work)
    assert failures == []
    ids = [datasetid for batch in results for datasetid in batch]
    numbers = sorted(int(d.rsplit("_", 1)[1]) for d in ids)
    assert numbers == list(range(1, THREADS * per_thread + 1))  # distinct and consecutive
    rows = db.driver.execute_query(
        "MATCH (ds:Dataset {session: 'race'})-[a:AGGREGATES]->() "
        "RETURN ds.datasetid AS id, count(a) AS n", database_=db.database).records
    assert len(rows) == THREADS * per_thread and all(r["n"] == 3 for r in rows)


def test_eight_concurrent_create_dataset_calls_all_succeed(clean_db: Database) -> None:
    create_datasets_concurrently(clean_db, per_thread=5)


@pytest.mark.stress
def test_many_concurrent_create_dataset_calls_all_succeed(clean_db: Database) -> None:
    create_datasets_concurrently(clean_db, per_thread=40)


# --- overlapping ingests --------------------------------------------------------------------

DOCS = 16


def version_of(i: int, version: int) -> dict[str, Any]:
    """Document ``i`` as thread ``version`` writes it: 1-3 chapters, its own category."""
    chapters = [f"doc {i} version {version} chapter {c}\n\nsecond paragraph {c} v{version}"
                for c in range(1 + version % 3)]
    return {"documentid": f"cc-{i}", "version": version, "chapters": chapters,
            "categories": {"VERSION": [str(version)]}, "keywords": [f"kw v{version}"]}


def assert_every_document_whole(db: Database) -> None:
    rows = db.driver.execute_query(
        "MATCH (d:Document) WHERE d.documentid STARTS WITH 'cc-' "
        "RETURN d.documentid AS id, d.version AS version, "
        "[(d)-[:HAS_CATEGORY]->(c) | c.value] AS categories, "
        "[(d)<-[:IN_DOCUMENT]-(c:Chapter) | c.text] AS chapters, "
        "[(d)<-[:IN_DOCUMENT]-(:Chapter)<-[:IN_CHAPTER]-(p) | p.text] AS paragraphs, "
        "[(d)<-[:IN_DOCUMENT]-(k:Keyword) | k.text] AS keywords, "
        "COUNT { MATCH (f:Fragment {documentid: d.documentid}) } AS fragments",
        database_=db.database).records
    assert len(rows) == DOCS
    for row in rows:
        i = int(row["id"].split("-")[1])
        want = version_of(i, row["version"])
        assert sorted(row["chapters"]) == sorted(want["chapters"]), row["id"]
        paragraphs = [p for c in want["chapters"] for p in c.split("\n\n")]
        assert sorted(row["paragraphs"]) == sorted(paragraphs), row["id"]
        assert row["categories"] == [str(row["version"])]
        assert row["keywords"] == want["keywords"]
        assert row["fragments"] == len(want["chapters"]) + len(paragraphs) + 1
    orphans = db.driver.execute_query(
        "MATCH (f:Fragment) WHERE NOT (f)-[:IN_DOCUMENT|IN_CHAPTER]->() RETURN count(f) AS n",
        database_=db.database).records
    assert orphans[0]["n"] == 0


def ingest_concurrently(db: Database, seconds: float, min_rounds: int) -> int:
    settings = Settings.from_env(write_batch_size=8)
    graph = ThalabusGraph(db, settings=settings,
                          embedder=HashEmbedder(settings.embedding_dimensions))
    deadline = time.monotonic() + seconds

    def work(thread: int) -> int:
        rng = random.Random(thread)
        rounds = 0
        while rounds < min_rounds or time.monotonic() < deadline:
            window = [(thread * 2 + k) % DOCS for k in range(10)] + [0]  # doc 0: everyone's
            rng.shuffle(window)
            report = graph.ingest([version_of(i, thread) for i in window], progress=False)
            assert report.errors == []
            assert len(set(window)) <= report.documents <= len(window)
            assert len(report.duplicates) == len(window) - len(set(window))
            rounds += 1
        return rounds

    results, failures = in_threads(work)
    assert failures == []
    assert_every_document_whole(db)
    return sum(results)


def test_eight_concurrent_overlapping_ingests_leave_every_document_whole(
        clean_db: Database) -> None:
    assert ingest_concurrently(clean_db, seconds=0.0, min_rounds=1) == THREADS


@pytest.mark.stress
def test_overlapping_ingests_for_twenty_seconds_leave_every_document_whole(
        clean_db: Database) -> None:
    rounds = ingest_concurrently(clean_db, seconds=20.0, min_rounds=1)
    print(f"{rounds} ingest runs of 10 documents by {THREADS} threads, 0 failed")
