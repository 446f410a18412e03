"""A vectors file for ``thalabus-graph calibrate`` whose ``.npy`` header declares more rows than
the file holds: a few hundred bytes may declare petabytes. It is refused as unreadable, exit 2
naming the folder, before any memory is set aside for the declared rows (a plain read would
allocate the declared size first and fail with a raw MemoryError, or take that memory)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from numpy.lib import format as npy_format

from tests.adversarial.test_calibrate_input import calibrate
from tests.support.labelled import DIM, labelled_files
from thalabus_graph.cli import main


def _declared_only(path: Path, rows: int) -> None:
    """Write a float64 ``.npy`` header declaring ``rows`` x DIM, followed by one row of data."""
    header = io.BytesIO()
    npy_format.write_array_header_1_0(
        header, {"descr": "<f8", "fortran_order": False, "shape": (rows, DIM)})
    path.write_bytes(header.getvalue() + np.ones(DIM).tobytes())


@pytest.mark.parametrize("rows", [10**15, 200])
def test_a_header_declaring_more_rows_than_the_file_holds_is_refused(
        tmp_path: Path, rows: int, capsys: pytest.CaptureFixture[str]) -> None:
    folder = labelled_files(tmp_path)
    _declared_only(folder / "embeddings" / "corpus.npy", rows)
    out = tmp_path / "out.json"
    assert main([*calibrate(folder), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: cannot read corpus vectors in "), err
    assert "unexpected" not in err and "MemoryError" not in err
    assert not out.exists()
