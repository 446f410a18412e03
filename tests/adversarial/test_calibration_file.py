"""Hostile calibration files: every field out of its range, a device, a FIFO and an oversized
file are refused with a ``ConfigurationError`` naming the file (and the field), before a
semantic query reads them and without reading more than the file bound."""

from __future__ import annotations

import json
import os
import re
import threading
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from thalabus_graph.errors import ConfigurationError
from thalabus_graph.scoring.calibration import Calibration, Gate, SourceMap, load_for
from thalabus_graph.scoring.calibration_file import MAX_FILE_BYTES, load, read_bounded
from thalabus_graph.scoring.scale import calibration_of
from thalabus_graph.settings import Settings


def good() -> dict[str, Any]:
    """A valid calibration's JSON form."""
    return Calibration("m", {"default": SourceMap(2.9, 2.8)}, skip=20,
                       gate=Gate(-135.0, 159.0, 12.3), foreign_gate=Gate(-115.8, 146.0)
                       ).to_dict()


def written(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_negative_skip_is_refused_when_the_setting_is_read(tmp_path: Path) -> None:
    data = good()
    data["skip"] = -5
    path = written(tmp_path, data)
    with pytest.raises(ConfigurationError, match=r"calibration\.json: field 'skip'"):
        calibration_of(Settings(calibration_file=str(path)))


BAD_FIELDS: list[tuple[str, Any, str]] = [
    ("skip", 10**6, "skip"),
    ("skip", 2.5, "skip"),
    ("skip", True, "skip"),
    ("skip", "20", "skip"),
    ("model", "", "model"),
    ("model", 7, "model"),
    ("feature", "cosine", "feature"),
    ("fitted_on", "scifact", "fitted_on"),
    ("fitted_on", [1], "fitted_on"),
    ("sources", {}, "sources"),
    ("sources", [], "sources"),
    ("sources", {"default": {"intercept": 1.0}}, "sources.default.slope"),
    ("sources", {"default": {"intercept": 1.0, "slope": 1e-6}}, "sources.default.slope"),
    ("sources", {"default": {"intercept": 1.0, "slope": -2.0}}, "sources.default.slope"),
    ("sources", {"default": {"intercept": float("nan"), "slope": 2.0}},
     "sources.default.intercept"),
    ("sources", {"default": {"intercept": 1e308 * 10, "slope": 2.0}},
     "sources.default.intercept"),
    ("sources", {"default": {"intercept": "1", "slope": 2.0}}, "sources.default.intercept"),
    ("sources", {"default": {"intercept": 1.0, "slope": 2.0, "slop": 1.0}},
     "sources.default.slop"),
    ("gate", {"intercept": -1.0, "slope": 0.0}, "gate.slope"),
    ("gate", {"intercept": -1.0, "slope": 1e9}, "gate.slope"),
    ("gate", {"intercept": -1.0, "slope": 2.0, "share_slope": -1.0}, "gate.share_slope"),
    ("gate", "open", "gate"),
    ("foreign_gate", {"intercept": -1.0, "slope": 2.0, "share_slope": 1.0}, "foreign_gate"),
    ("measured", [], "measured"),
    ("skp", 20, "skp"),
]


@pytest.mark.parametrize(("field", "value", "named"), BAD_FIELDS)
def test_every_field_is_checked_and_named(tmp_path: Path, field: str, value: Any,
                                          named: str) -> None:
    data = good()
    data[field] = value
    path = written(tmp_path, data)
    with pytest.raises(ConfigurationError, match=re.escape(f"{path.name}: field '{named}'")):
        load(path)


@pytest.mark.parametrize("text", ["", "[]", "null", "{\"format\": ", "[" * 100_000,
                                  "{\"format\": \"thalabus-calibration/1\", \"skip\": 1"
                                  + "0" * 5000 + "}"])
def test_text_that_is_no_calibration_is_refused_with_the_file(tmp_path: Path,
                                                               text: str) -> None:
    path = tmp_path / "c.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"c\.json"):
        load(path)


def test_bytes_that_are_not_utf8_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_bytes(b"\xff\xfe{}")
    with pytest.raises(ConfigurationError, match="not UTF-8"):
        load(path)


def _peak_bytes_of(path: Path) -> int:
    """The most memory Python allocated while the file was refused."""
    tracemalloc.start()
    try:
        with pytest.raises(ConfigurationError, match=re.escape(str(path))):
            load_for("m", str(path))
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_an_endless_device_is_refused_without_reading_it() -> None:
    assert _peak_bytes_of(Path("/dev/zero")) < MAX_FILE_BYTES


def test_an_oversized_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    with path.open("wb") as handle:
        handle.truncate(1 << 30)  # sparse: no disk used
    assert _peak_bytes_of(path) < MAX_FILE_BYTES
    path.write_bytes(b" " * (MAX_FILE_BYTES + 1))
    with pytest.raises(ConfigurationError, match="larger than"):
        read_bounded(path)


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "calibration.fifo"
    os.mkfifo(fifo)
    outcome: list[BaseException | None] = []

    def read() -> None:
        try:
            load(fifo)
            outcome.append(None)
        except BaseException as exc:  # handed to the test thread
            outcome.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)  # only turns a blocked reader into a failure
    if reader.is_alive():  # release the reader: a writer that opens and closes
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join()
        pytest.fail("reading a FIFO blocked until a writer came")
    assert isinstance(outcome[0], ConfigurationError)
    assert "not a regular file" in str(outcome[0])
