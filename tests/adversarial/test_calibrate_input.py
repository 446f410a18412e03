"""Hostile input to ``thalabus-graph calibrate``: constant, non-finite, mis-shaped or
mismatched vectors, empty or malformed files and too little labelled data are refused with
exit 2 and a message naming the file and what to fix; no calibration file is written, so a
degenerate fit never reaches a search."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from tests.support.labelled import DIM, labelled_files
from thalabus_graph.cli import main
from thalabus_graph.errors import ConfigurationError
from thalabus_graph.scoring.fitting import Labelled


def calibrate(folder: Path, *extra: str, model: str = "toy") -> list[str]:
    return ["calibrate", "--corpus", str(folder / "corpus.jsonl"),
            "--queries", str(folder / "queries.jsonl"), "--qrels", str(folder / "qrels.tsv"),
            "--embeddings", str(folder / "embeddings"), "--model", model, *extra]


def edit_vectors(kind: str, change: Callable[[np.ndarray], object]) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        path = folder / "embeddings" / f"{kind}.npy"
        np.save(path, np.asarray(change(np.load(path))))
    return edit


def set_row(row: int, value: float) -> Callable[[np.ndarray], np.ndarray]:
    def change(a: np.ndarray) -> np.ndarray:
        a[row, 0] = value
        return a
    return change


def write(name: str, text: str | bytes) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        path = folder / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)
    return edit


def link(name: str, target: str) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        (folder / name).unlink()
        (folder / name).symlink_to(target)
    return edit


def fifo(name: str) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        (folder / name).unlink()
        os.mkfifo(folder / name)
    return edit


CASES: list[tuple[str, Callable[[Path], None], str]] = [
    ("zero queries", edit_vectors("queries", np.zeros_like), "queries.npy: the vector of 'q0' "
     "is all zeros"),
    ("zero corpus row", edit_vectors("corpus", lambda a: np.vstack([np.zeros((1, DIM)), a[1:]])),
     "the vector of 'd0' is all zeros"),
    ("other dimensions", edit_vectors("queries", lambda a: a[:, :DIM // 2]),
     "have 32 dimensions and the query vectors 16"),
    ("NaN", edit_vectors("corpus", set_row(5, float("nan"))), "'d5' holds NaN or infinity"),
    ("infinity", edit_vectors("queries", set_row(2, float("inf"))),
     "'q2' holds NaN or infinity"),
    ("text vectors", edit_vectors("corpus", lambda a: np.full(a.shape, "x")),
     "vectors must be numbers"),
    ("one row", edit_vectors("queries", lambda a: a[0]), "must be a non-empty matrix"),
    ("no rows", edit_vectors("queries", lambda a: a[:0]), "must be a non-empty matrix"),
    ("fewer ids", write("embeddings/corpus.ids.json", json.dumps(["d0", "d1"])),
     "200 rows for 2 ids"),
    ("repeated ids", write("embeddings/corpus.ids.json", json.dumps(["d0"] * 200)),
     "an id names more than one row"),
    ("ids not a list", write("embeddings/queries.ids.json", '{"q0": 0}'),
     "must be a JSON list of ids"),
    ("empty ids", write("embeddings/corpus.ids.json", ""), "cannot read corpus vectors"),
    ("empty qrels", write("qrels.tsv", ""), "has a relevant document"),
    ("ids of another corpus", write("qrels.tsv", "q\tc\ts\n" + "".join(
        f"q{i}\tother-{i}\t1\n" for i in range(30))), "do not match the corpus"),
    ("too few judged", write("qrels.tsv", "q\tc\ts\nq0\td1\t1\nq1\td2\t1\n"),
     "needs at least 10 of each"),
    ("qrels not UTF-8", write("qrels.tsv", b"q\tc\ts\n\xff\xfe\t1\t1\n"), "cannot read"),
    ("qrels an endless device", link("qrels.tsv", "/dev/zero"), "is not a regular file"),
    ("vectors an endless device", link("embeddings/corpus.npy", "/dev/zero"),
     "is not a regular file"),
    ("ids a FIFO", fifo("embeddings/queries.ids.json"), "is not a regular file"),
    ("truncated vectors", lambda folder: (folder / "embeddings" / "corpus.npy").write_bytes(
        (folder / "embeddings" / "corpus.npy").read_bytes()[:100]), "cannot read corpus"),
]


@pytest.mark.parametrize(("change", "message"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_hostile_vectors_and_labels_are_refused_by_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Callable[[Path], None],
        message: str) -> None:
    folder = labelled_files(tmp_path / "set")
    change(folder)
    out = tmp_path / "out.json"
    assert main(calibrate(folder, "--out", str(out))) == 2
    err = capsys.readouterr().err
    assert message in err and "unexpected" not in err
    assert not out.exists()


TEXT_CASES: list[tuple[str, Callable[[Path], None], str]] = [
    ("empty corpus", write("corpus.jsonl", ""), "corpus.jsonl holds no records"),
    ("corpus an endless device", link("corpus.jsonl", "/dev/zero"), "is not a regular file"),
    ("queries a FIFO", fifo("queries.jsonl"), "is not a regular file"),
    ("a list, not an object", write("queries.jsonl", "[1, 2]\n"),
     "queries.jsonl line 1: not a JSON object"),
    ("no _id", write("corpus.jsonl", '{"text": "x"}\n'), "corpus.jsonl line 1"),
    ("a query without text", write("queries.jsonl", '{"_id": "q0", "text": 7}\n'),
     "queries.jsonl line 1: a query needs a string"),
    ("not JSON", write("queries.jsonl", '{"_id": \n'), "queries.jsonl is not JSON Lines"),
    ("not UTF-8", write("corpus.jsonl", b'{"_id": "\xff"}\n'), "cannot read"),
]


@pytest.mark.parametrize(("change", "message"), [c[1:] for c in TEXT_CASES],
                         ids=[c[0] for c in TEXT_CASES])
def test_malformed_texts_are_refused_when_the_gate_reads_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Callable[[Path], None],
        message: str) -> None:
    folder = labelled_files(tmp_path / "set")
    change(folder)
    out = tmp_path / "out.json"
    # the shipped e5 gate reads the lexical share: the texts are read beside the vectors
    assert main(calibrate(folder, "--out", str(out), model="multilingual-e5-small")) == 2
    err = capsys.readouterr().err
    assert message in err and "unexpected" not in err
    assert not out.exists()


def test_a_map_that_scores_every_candidate_alike_is_refused() -> None:
    from thalabus_graph.cli.calibrate_cmd import fit_checked

    rng = np.random.default_rng(0)
    cosines = [np.sort(rng.uniform(0.6, 0.9, 100))[::-1] for _ in range(40)]
    refused, flat = 0, 0
    for seed in range(20):
        labels = np.random.default_rng(seed)
        relevant = [labels.uniform(size=100) < 0.3 for _ in range(40)]
        try:
            fit_checked("toy", [Labelled("noise", cosines, relevant, 1000)], None)
        except ConfigurationError as exc:
            refused += 1
            flat += "near-constant" in str(exc)
            assert "near-constant" in str(exc) or "no increasing map" in str(exc)
    assert refused == 20  # labels that do not follow the evidence give no calibration
    assert flat > 0


@pytest.mark.parametrize(("extra", "message"), [
    (["--report", "r.txt"], "give a .png or .svg file"),
    (["--report", "r.png", "--held-out", "1.5"], "--held-out: must be at most 1"),
    (["--report", "r.png", "--held-out", "nan"], "--held-out: must be a finite number"),
    (["--report", "r.png", "--held-out", "1"], "--held-out 1"),
    (["--report", "r.png", "--seed", "-1"], "--seed -1"),
    ([], "give --out FILE"),
])
def test_report_options_out_of_range_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str],
        message: str) -> None:
    folder = labelled_files(tmp_path / "set")
    try:
        code = main(calibrate(folder, *[str(tmp_path / e) if e.startswith("r.") else e
                                        for e in extra]))
    except SystemExit as exc:  # refused by the flag's own type, as argparse does
        code = exc.code
    assert code == 2
    assert message in capsys.readouterr().err


def test_an_out_path_that_cannot_be_written_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = labelled_files(tmp_path / "set")
    assert main(calibrate(folder, "--out", str(tmp_path))) == 2
    err = capsys.readouterr().err
    assert "cannot write calibration file" in err and "unexpected" not in err


def test_a_report_without_matplotlib_names_the_extra(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # an import of it fails
    folder = labelled_files(tmp_path / "set")
    assert main(calibrate(folder, "--report", str(tmp_path / "r.png"))) == 2
    assert "thalabus-graph[plots]" in capsys.readouterr().err
