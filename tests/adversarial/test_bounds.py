"""Bounded work: query and text size limits refused before any work, a per-query time budget,
and long passages embedded in a bounded number of windows."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.adversarial.conftest import HashEmbedder
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.cli import main
from thalabus_graph.embeddings.base import Vectors
from thalabus_graph.embeddings.windows import windows
from thalabus_graph.errors import QueryNodeError, QueryTimeout, ThalabusSyntaxError
from thalabus_graph.graph.database import Database, deadline
from thalabus_graph.query import Or, Semantic
from thalabus_graph.query.limits import QueryLimits, check_query_node

DIMS = Settings.from_env().embedding_dimensions


class Counting(HashEmbedder):
    """Counts the texts and characters it is asked to embed; sleeps ``pause`` per call."""

    def __init__(self, dimensions: int, pause: float = 0.0) -> None:
        super().__init__(dimensions)
        self.texts = 0
        self.chars = 0
        self.pause = pause

    def _stack(self, texts: Sequence[str]) -> Vectors:
        self.texts += len(texts)
        self.chars += sum(len(t) for t in texts)
        time.sleep(self.pause)
        return super()._stack(texts)


def or_chain(n: int) -> str:
    return " OR ".join(f'"phrase {i}"' for i in range(n))


@pytest.mark.integration
@pytest.mark.parametrize(("text", "position", "what"), [
    (or_chain(1000), len(or_chain(512)) + len(" OR "), "max_query_terms"),
    ("(" * 10_100 + '"x"' + ")" * 10_100, 10_100, "max_query_depth"),
    ("NOT " * 10_100 + "KIND=a", 40_400, "max_query_depth"),
    ('"' + "word " * 10_000 + '"', 0, "max_phrase_chars"),
])
def test_an_oversized_query_is_refused_before_any_work(
        clean_db: Database, text: str, position: int, what: str) -> None:
    embedder = Counting(DIMS)
    graph = ThalabusGraph(clean_db, settings=Settings.from_env(), embedder=embedder)
    with pytest.raises(ThalabusSyntaxError, match=what) as caught:
        graph.query(text)
    assert caught.value.position == position
    assert embedder.texts == 0


@pytest.mark.integration
def test_an_overlong_query_is_refused_also_by_explain(clean_db: Database) -> None:
    graph = ThalabusGraph(clean_db, settings=Settings.from_env().replace(max_query_chars=1000))
    text = " OR ".join(["KIND=a"] * 200)
    for run in (graph.query, graph.explain):
        with pytest.raises(ThalabusSyntaxError, match="max_query_chars") as caught:
            run(text)
        assert caught.value.position == 1000
    free = Settings.from_env().replace(max_query_terms=10)
    # explain runs nothing: terms are free
    assert ThalabusGraph(clean_db, settings=free).explain(or_chain(100))["plan"]


@pytest.mark.integration
def test_the_cli_exits_2_on_an_oversized_query(
        clean_db: Database, neo4j_uri: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("THALABUS_MAX_QUERY_TERMS", "2")
    assert main(["query", or_chain(3), "--uri", neo4j_uri]) == 2
    assert "max_query_terms" in capsys.readouterr().err


def test_a_tree_built_in_python_is_held_to_the_same_limits() -> None:
    node = Semantic("p0")
    for i in range(1, 600):
        node = Or(node, Semantic(f"p{i}"))
    with pytest.raises(QueryNodeError, match="max_query_terms"):
        check_query_node(node, QueryLimits())
    check_query_node(node, QueryLimits(max_terms=600))  # a long OR chain is one level deep


@pytest.mark.integration
def test_a_query_past_its_budget_ends_with_query_timeout(clean_db: Database) -> None:
    settings = Settings.from_env().replace(query_timeout_seconds=0.3)
    graph = ThalabusGraph(clean_db, settings=settings, embedder=Counting(DIMS, pause=0.5))
    graph.ingest([{"documentid": "b-1", "categories": {"KIND": "a"}, "chapters": ["x y"],
                   "embeddings": {"b-1-c1": [1.0] + [0.0] * (DIMS - 1),
                                  "b-1-p1": [1.0] + [0.0] * (DIMS - 1)}}], progress=False)
    with pytest.raises(QueryTimeout, match=r"time budget of 0\.3 s"):
        graph.query('"x" OR "y" OR "z"')


@pytest.mark.integration
def test_neo4j_ends_a_long_read_at_the_budget(clean_db: Database) -> None:
    with deadline(1.0), pytest.raises(QueryTimeout):
        clean_db.read_tx(lambda tx: list(tx.run(
            "UNWIND range(1, 3000000000) AS x RETURN sum(x) AS s")), what="long read")


def test_a_long_passage_is_cut_into_a_bounded_number_of_windows() -> None:
    parts = windows("word " * 2_000_000, 2000, 8)
    assert len(parts) == 8 and all(len(p) <= 2000 for p in parts)
    assert windows("short text", 2000, 8) == ["short text"]


@pytest.mark.integration
def test_a_10_mb_chapter_is_ingested_with_bounded_embedding_work(
        clean_db: Database, tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text(json.dumps({"documentid": "big", "chapters": ["word " * 2_000_000]}) + "\n"
                    + json.dumps({"documentid": "too-long", "chapters": ["x" * 3000]}) + "\n",
                    encoding="utf-8")
    embedder = Counting(DIMS)
    settings = Settings.from_env().replace(max_passage_chars=10_000_000)
    graph = ThalabusGraph(clean_db, settings=settings, embedder=embedder)
    report = graph.ingest(path, progress=False)
    assert report.documents == 2 and report.errors == []
    window, cap = settings.embedding_window_chars, settings.embedding_max_windows
    assert embedder.chars <= 3 * window * cap  # chapter + its paragraph + the short one
    strict = ThalabusGraph(clean_db, settings=settings.replace(max_passage_chars=1000),
                           embedder=embedder)
    report = strict.ingest(path, progress=False)
    assert [(e.line_number, "max_passage_chars" in e.message) for e in report.errors] == [
        (1, True), (2, True)]
