"""The calibration file's form: every calibration within the checked ranges reads back as
itself, and what ``save`` refuses is never written."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thalabus_graph.errors import ConfigurationError
from thalabus_graph.scoring.calibration import Calibration, Gate, SourceMap, shipped
from thalabus_graph.scoring.calibration_file import (
    MAX_COEFFICIENT,
    MAX_SKIP,
    MIN_MAP_SLOPE,
    from_dict,
    load,
    save,
    to_dict,
)

finite = st.floats(min_value=-MAX_COEFFICIENT, max_value=MAX_COEFFICIENT, allow_nan=False)
positive = st.floats(min_value=1e-6, max_value=MAX_COEFFICIENT)
names = st.text(min_size=1, max_size=20)
maps = st.builds(SourceMap, finite, st.floats(min_value=MIN_MAP_SLOPE, max_value=MAX_COEFFICIENT))
gates = st.builds(Gate, finite, positive, st.none() | positive)
calibrations = st.builds(
    lambda model, sources, skip, fitted_on, gate, foreign: Calibration(
        model, sources, skip, tuple(fitted_on), {"note": model}, gate,
        foreign if gate is not None else None),
    names, st.dictionaries(names, maps, min_size=1, max_size=4),
    st.integers(min_value=0, max_value=MAX_SKIP), st.lists(names, max_size=4),
    st.none() | gates, st.none() | st.builds(Gate, finite, positive))


@given(calibrations)
@settings(max_examples=200, deadline=None)
def test_every_calibration_within_the_ranges_reads_back_as_itself(
        calibration: Calibration) -> None:
    assert from_dict(json.loads(json.dumps(to_dict(calibration)))) == calibration


def test_the_shipped_file_passes_every_check() -> None:
    e5 = shipped("multilingual-e5-small")
    assert e5 is not None
    assert from_dict(to_dict(e5)) == e5


@pytest.mark.parametrize("bad", [
    Calibration("m", {"default": SourceMap(0.0, 0.001)}),
    Calibration("m", {"default": SourceMap(math.nan, 2.0)}),
    Calibration("m", {"default": SourceMap(0.0, 2.0)}, skip=-5),
    Calibration("m", {"default": SourceMap(0.0, 2.0)}, measured={"x": math.inf}),
    Calibration("m", {}),
])
def test_save_refuses_what_could_not_be_read_back_and_writes_nothing(
        tmp_path: Path, bad: Calibration) -> None:
    path = tmp_path / "c.json"
    with pytest.raises(ConfigurationError, match=r"c\.json"):
        save(bad, path)
    assert list(tmp_path.iterdir()) == []


def test_save_replaces_a_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text("old")
    calibration = Calibration("m", {"default": SourceMap(1.0, 2.0)})
    save(calibration, path)
    assert load(path) == calibration
    assert [p.name for p in tmp_path.iterdir()] == ["c.json"]
