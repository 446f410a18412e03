"""Reranking made observable from the shell, on the real Neo4j: ``rerank --policy``, the
NoReranking notes, ``datasets hide|unhide``, ``datasets show --histogram`` and ``-v`` logging;
and the goal fill-up's INFO line per dataset."""

from __future__ import annotations

import asyncio
import json
import logging
import struct
import sys
from pathlib import Path

import pytest

from tests.integration.sample import graph_scored_by
from tests.support.loopback import LoopbackServer, score_handler
from thalabus_graph import ThalabusGraph
from thalabus_graph.cli import main
from thalabus_graph.graph.database import Database
from thalabus_graph.mcp.tools import Tools
from thalabus_graph.rerank import (
    Percentile,
    PerQueryNormalised,
    ScoreApiReranker,
    ScoreGap,
    SelectionPolicy,
    ThresholdWithTiers,
    TopK,
)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def graph(db: Database, score_server: LoopbackServer) -> ThalabusGraph:
    return graph_scored_by(db, score_server.url)


@pytest.fixture()
def with_reranker(monkeypatch: pytest.MonkeyPatch, score_server: LoopbackServer) -> None:
    monkeypatch.setenv("THALABUS_RERANKER_URL", score_server.url)
    monkeypatch.setenv("THALABUS_RERANKER_PROTOCOL", "vllm-score")


@pytest.fixture()
def uri(neo4j_uri: str) -> list[str]:
    return ["--uri", neo4j_uri]


def make_dataset(graph: ThalabusGraph, query: str, session: str) -> str:
    return graph.query(query, create_dataset=True, session=session,
                       return_documents=False).dataset_ids[0]


@pytest.mark.parametrize("flags,policy", [
    (["--policy", "topk", "--k", "3"], TopK(3)),
    (["--policy", "percentile", "--percentile", "75"], Percentile(75)),
    (["--policy", "gap", "--min-keep", "2"], ScoreGap(2)),
    (["--policy", "normalised", "--threshold", "0.6"], PerQueryNormalised(0.6)),
    (["--policy", "threshold", "--threshold", "0.3"],
     ThresholdWithTiers(0.3, 50, 100, 5)),
])
def test_rerank_policy_flags_select_like_the_policy_objects(
        graph: ThalabusGraph, with_reranker: None, uri: list[str], flags: list[str],
        policy: SelectionPolicy, capsys: pytest.CaptureFixture[str]) -> None:
    parent = make_dataset(graph, '"Bob the cat climbs a tree"', "policy")
    assert main(["rerank", parent, *flags, *uri, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    expected = graph.rerank_dataset(parent, session="policy-api", policy=policy)
    assert out["reranked"] and out["weight_scale"] == "reranker"
    assert [f["fragmentid"] for f in out["fragments"]] == \
        [f.fragmentid for f in expected.fragments]
    if flags[1] == "topk":
        assert len(out["fragments"]) == 3


def test_no_reranker_is_said_on_stderr(graph: ThalabusGraph, uri: list[str],
                                       monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("THALABUS_RERANKER_URL", raising=False)
    parent = make_dataset(graph, '"cat"', "none")
    assert main(["rerank", parent, *uri]) == 0
    captured = capsys.readouterr()
    assert "NoReranking" in captured.err and "THALABUS_RERANKER_URL" in captured.err
    assert "order kept (no-reranker)" in captured.out
    assert main(["query", "CHARACTER=Bob", "--rerank", *uri]) == 0
    assert "--rerank changes nothing" in capsys.readouterr().err


def test_hide_and_unhide_from_the_shell(graph: ThalabusGraph, uri: list[str],
                                        capsys: pytest.CaptureFixture[str]) -> None:
    parent = make_dataset(graph, '"kitchen floor"', "hide")
    first, second = (m.fragmentid for m in graph.datasets.members(parent)[:2])
    assert main(["datasets", "hide", parent, first, second, "docid-0-c9", *uri]) == 2
    captured = capsys.readouterr()
    assert "2 members hidden" in captured.out
    assert captured.err.strip() == f"not a member of {parent}: docid-0-c9"
    visible = {m.fragmentid for m in graph.datasets.members(parent)}
    assert first not in visible and second not in visible
    assert main(["datasets", "unhide", parent, first, *uri, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"dataset": parent, "shown": 1,
                                                    "not_members": []}
    visible = {m.fragmentid for m in graph.datasets.members(parent)}
    assert first in visible and second not in visible


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def test_histogram_of_a_derived_dataset(graph: ThalabusGraph, uri: list[str], tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    parent = make_dataset(graph, '"asylum decision"', "plot")
    derived = graph.rerank_dataset(parent, session="plot").dataset_id
    out = tmp_path / "scores.png"
    assert main(["datasets", "show", derived, "--histogram", str(out), *uri]) == 0
    printed = capsys.readouterr().out
    assert f"histogram: {out}" in printed and "reranker scale" in printed
    assert out.stat().st_size > 10_000
    assert png_size(out) == (800, 800)

    assert main(["datasets", "show", parent, "--histogram", str(tmp_path / "x.png"),
                 *uri]) == 1
    assert "only a dataset written by `thalabus-graph rerank`" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()


def test_histogram_without_matplotlib_says_how_to_get_it(
        graph: ThalabusGraph, uri: list[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    parent = make_dataset(graph, '"cat"', "noplot")
    derived = graph.rerank_dataset(parent, session="noplot").dataset_id
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["datasets", "show", derived, "--histogram", str(tmp_path / "y.png"),
                 *uri]) == 1
    assert "pip install 'thalabus-graph[plots]'" in capsys.readouterr().err


def test_verbose_logs_one_line_per_fragment_source(uri: list[str], graph: ThalabusGraph,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    fragments = graph.query('"cat" OR CHARACTER=Jane', return_documents=False).fragments
    sources = {f.source for f in fragments}
    assert len(sources) >= 2
    try:
        assert main(["-v", "query", '"cat" OR CHARACTER=Jane', "--fragments", *uri]) == 0
        err = capsys.readouterr().err
        for source in sources:
            count = sum(f.source == source for f in fragments)
            assert f"INFO thalabus_graph.engine: query: {count} {source} fragments" in err
        assert main(["query", "CHARACTER=Jane", "--log-level", "warning", *uri]) == 0
        assert "INFO" not in capsys.readouterr().err
    finally:
        logging.getLogger("thalabus_graph").setLevel(logging.NOTSET)


def test_goal_fill_up_logs_once_per_dataset(graph: ThalabusGraph,
                                            caplog: pytest.LogCaptureFixture) -> None:
    with LoopbackServer(score_handler("vllm-score", lambda q, t: 0.001)) as server:
        low = ThalabusGraph(graph.db, settings=graph.settings, embedder=graph.embedder,
                            reranker=ScoreApiReranker(server.url, protocol="vllm-score"))
        first = low.rerank_dataset(make_dataset(low, '"cat"', "fill"), session="fill")
        # category stubs: members distinct from the first dataset's fragments
        second = low.rerank_dataset(make_dataset(low, "COUNTRY_OF_ORIGIN=IQ", "fill"),
                                    '"asylum"', session="fill")
    low.datasets.use_for_goal("g-log", first.dataset_id)
    low.datasets.use_for_goal("g-log", second.dataset_id)
    with caplog.at_level(logging.INFO, logger="thalabus_graph.goals"):
        ctx = low.goal_context("g-log", target=100, char_budget=10_000_000)
    lines = [r.getMessage() for r in caplog.records if "fill-up from" in r.getMessage()]
    assert ctx.fill_up_used and ctx.filled_from == [first.dataset_id, second.dataset_id]
    assert len(lines) == 2
    assert first.dataset_id in lines[0] and second.dataset_id in lines[1]


def test_rerank_query_is_a_plain_question(graph: ThalabusGraph, with_reranker: None,
                                          uri: list[str],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    parent = make_dataset(graph, '"Bob the cat climbs a tree"', "plain")
    question = 'does "Bob" climb trees? AND NOT'     # no query syntax: asked as it is
    assert main(["rerank", parent, "--query", question, *uri, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["query"] == question and out["reranked"]
    assert main(["rerank", parent, "--query", "   ", *uri]) == 2
    assert capsys.readouterr().err.startswith("error: ")


def test_reranked_category_stubs_keep_their_whole_document_id(
        graph: ThalabusGraph, with_reranker: None, uri: list[str],
        capsys: pytest.CaptureFixture[str]) -> None:
    parent = make_dataset(graph, "COUNTRY_OF_ORIGIN=IQ", "stubs")
    stubs = graph.datasets.members(parent)
    assert stubs and all(m.source == "category" and "-" in m.documentid for m in stubs)
    api = graph.rerank_dataset(parent, '"asylum"', session="stubs")
    assert api.reranked and api.fragments
    assert [(f.fragmentid, f.documentid) for f in api.fragments] == \
        [(f.fragmentid, f.fragmentid) for f in api.fragments]
    assert {m.documentid for m in graph.datasets.members(api.dataset_id)} == \
        {f.fragmentid for f in api.fragments}
    assert main(["rerank", parent, "--query", "asylum", *uri, "--json"]) == 0
    shell = json.loads(capsys.readouterr().out)["fragments"]
    assert shell and all(f["documentid"] == f["fragmentid"] for f in shell)
    kept = graph.rerank_dataset(parent, session="stubs")
    assert not kept.reranked
    assert all(f.documentid == f.fragmentid for f in kept.fragments)
    tools = Tools(graph, allow_writes=True)
    out = asyncio.run(tools.rerank_dataset(parent, '"asylum"'))
    assert out.members and all(m.documentid == m.fragmentid for m in out.members)
