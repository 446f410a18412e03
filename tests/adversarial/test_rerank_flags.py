"""``query --rerank`` tells when the reranker failed: warnings, the result's flags and the
stored dataset's ``reranked`` / ``reason`` / ``weight_scale`` say what really happened."""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator

import pytest

from tests.adversarial.conftest import HashEmbedder
from tests.support.loopback import LoopbackServer, Request, Response, score_handler
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.cli import main
from thalabus_graph.graph.database import Database
from thalabus_graph.rerank import ScoreApiReranker

pytestmark = pytest.mark.integration
DIMS = Settings.from_env().embedding_dimensions
QUERY = '"zebra stripes" OR "number"'
"""Branch reranking reranks each side of an AND / OR."""


def failing_every_other() -> object:
    """A vLLM score server whose every second request fails with HTTP 500."""
    good = score_handler("vllm-score")
    counter = itertools.count()
    lock = threading.Lock()

    def handle(request: Request) -> Response:
        with lock:
            n = next(counter)
        return Response(status=500, raw=b"busy") if n % 2 else good(request)

    return handle


def not_json(request: Request) -> Response:
    return Response(status=200, raw=b"<html>maintenance</html>")


@pytest.fixture()
def graph(clean_db: Database) -> Iterator[ThalabusGraph]:
    g = ThalabusGraph(clean_db, settings=Settings.from_env(), embedder=HashEmbedder(DIMS))
    g.ingest([{"documentid": f"r-{i}", "chapters": [f"zebra stripes number {i}"]}
              for i in range(12)], progress=False)
    yield g


def with_reranker(graph: ThalabusGraph, url: str) -> ThalabusGraph:
    return ThalabusGraph(graph.db, settings=graph.settings, embedder=graph.embedder,
                         reranker=ScoreApiReranker(url, protocol="vllm-score", batch_size=1,
                                                   max_retries=0, max_parallelism=1))


def test_a_partly_failing_reranker_is_reported_and_recorded(graph: ThalabusGraph) -> None:
    with LoopbackServer(failing_every_other()) as server:  # type: ignore[arg-type]
        result = with_reranker(graph, server.url).query(
            QUERY, automatically_rerank=True, create_dataset=True, return_documents=False)
    assert result.rerank is not None
    assert result.rerank["reranked"] is True and result.rerank["reason"] == "partial"
    assert result.rerank["failures"] > 0 and result.rerank["unscored"] > 0
    assert [w.kind for w in result.warnings] == ["rerank"]
    assert "partial" in result.warnings[0].message
    info = graph.datasets.get(result.dataset_ids[0])
    assert (info.reranked, info.reason) == (True, "partial")
    assert result.to_dict()["rerank"]["reason"] == "partial"


def test_a_reranker_replying_non_json_leaves_retrieval_scores_said_so(
        graph: ThalabusGraph) -> None:
    with LoopbackServer(not_json) as server:
        result = with_reranker(graph, server.url).query(
            QUERY, automatically_rerank=True, create_dataset=True, return_documents=False)
    assert result.rerank is not None
    assert result.rerank["reranked"] is False and result.rerank["reason"] == "failed"
    assert result.rerank["weight_scale"] == "retrieval"
    info = graph.datasets.get(result.dataset_ids[0])
    assert (info.reranked, info.reason, info.weight_scale) == (False, "failed", "retrieval")
    assert "nothing was reranked" in result.warnings[0].message


def test_a_complete_rerank_is_recorded_on_the_reranker_scale(graph: ThalabusGraph) -> None:
    with LoopbackServer(score_handler("vllm-score")) as server:
        result = with_reranker(graph, server.url).query(
            QUERY, automatically_rerank=True, create_dataset=True, return_documents=False)
        single = with_reranker(graph, server.url).query('"zebra"', automatically_rerank=True)
    assert result.rerank == {"reranked": True, "reason": None, "weight_scale": "reranker",
                             "failures": 0, "unscored": 0}
    assert result.warnings == []
    assert single.rerank is not None and single.rerank["reason"] == "no-branch"
    assert graph.datasets.get(result.dataset_ids[0]).weight_scale == "reranker"


def test_the_cli_json_carries_the_warning_and_the_flags(
        graph: ThalabusGraph, neo4j_uri: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    with LoopbackServer(not_json) as server:
        monkeypatch.setenv("THALABUS_RERANKER_URL", server.url)
        monkeypatch.setenv("THALABUS_RERANKER_MAX_RETRIES", "0")
        monkeypatch.setattr("thalabus_graph.engine.embedder_from_settings",
                            lambda settings: HashEmbedder(DIMS))
        assert main(["query", QUERY, "--rerank", "--json", "--uri", neo4j_uri]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["rerank"]["reranked"] is False and out["rerank"]["reason"] == "failed"
    assert [w["kind"] for w in out["warnings"]] == ["rerank"]
