"""``thalabus-graph calibrate --report``: the reliability of a fit on held-out queries, drawn
and written as numbers, on a split that holds every query once and is the same every run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.support.labelled import labelled_files
from thalabus_graph.cli import main
from thalabus_graph.cli.calibrate_cmd import split
from thalabus_graph.scoring.calibration import load_for
from thalabus_graph.scoring.fitting import Labelled
from thalabus_graph.settings import Settings


def args_for(*folders: Path) -> list[str]:
    out = ["calibrate", "--model", "toy"]
    for folder in folders:
        out += ["--corpus", str(folder / "corpus.jsonl"), "--queries",
                str(folder / "queries.jsonl"), "--qrels", str(folder / "qrels.tsv"),
                "--embeddings", str(folder / "embeddings")]
    return out


def test_the_report_draws_the_diagram_and_writes_its_numbers(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = labelled_files(tmp_path / "a", seed=1), labelled_files(tmp_path / "b", seed=2)
    png, out = tmp_path / "reliability.png", tmp_path / "mine.json"
    assert main([*args_for(a, b), "--report", str(png), "--out", str(out), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert png.read_bytes().startswith(b"\x89PNG")
    report = json.loads(png.with_suffix(".json").read_text())
    assert printed["reliability"] == report
    assert 0.0 <= report["ece"] <= 1.0 and report["bins"] == 10
    assert set(report["ece_per_set"]) == {"a held out", "b held out"}
    assert report["queries"] == {"a held out": 9, "b held out": 9, "a fit part": 21,
                                 "b fit part": 21}
    top = min(Settings.from_env().top_n_chapters, 200)  # a search's candidates of 200
    assert report["candidates"] == 2 * 9 * top
    bins = report["reliability"]["bins"]
    assert sum(b["weight"] for b in bins) == pytest.approx(1.0)
    assert sum(b["count"] for b in bins) == report["candidates"]
    # relevant documents stand out clearly here: the held-out scores read as probabilities
    assert report["ece"] < 0.1
    written = load_for("ignored", str(out))
    assert written is not None and written.model == "toy"


def test_the_held_out_draw_is_the_same_every_run_and_the_seed_changes_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = labelled_files(tmp_path / "a")
    eces = []
    for seed in ("0", "0", "7"):
        png = tmp_path / f"r{len(eces)}.png"
        assert main([*args_for(folder), "--report", str(png), "--seed", seed]) == 0
        eces.append(json.loads(png.with_suffix(".json").read_text())["ece"])
    assert eces[0] == eces[1] != eces[2]
    assert "expected calibration error" in capsys.readouterr().out


@pytest.mark.parametrize("queries", [2, 5, 31])
@pytest.mark.parametrize("held_out", [0.01, 0.3, 0.99])
def test_the_split_holds_every_query_once_and_keeps_both_parts(queries: int,
                                                               held_out: float) -> None:
    cosines = [np.asarray([0.9 - i / 100, 0.5]) for i in range(queries)]
    relevant = [np.asarray([True, False]) for _ in range(queries)]
    shares = [i / queries for i in range(queries)]
    labelled = Labelled("s", cosines, relevant, 10, shares)
    fitted, held = split(labelled, held_out, 0)
    assert len(fitted.cosines) >= 1 and len(held.cosines) >= 1
    seen = sorted(float(c[0]) for c in [*fitted.cosines, *held.cosines])
    assert seen == sorted(float(c[0]) for c in cosines)
    assert fitted.shares is not None and held.shares is not None
    assert sorted([*fitted.shares, *held.shares]) == shares
