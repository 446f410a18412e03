"""``THALABUS_CALIBRATION_FILE`` naming a directory: refused as not a regular file, like a
device or a FIFO, with a ``ConfigurationError`` naming the path (the CLI exits 2), not an
``IsADirectoryError`` from opening it."""

from __future__ import annotations

from pathlib import Path

import pytest

from thalabus_graph.cli import main
from thalabus_graph.errors import ConfigurationError
from thalabus_graph.graph.database import Database
from thalabus_graph.scoring.calibration_file import load, read_bounded


def test_a_directory_is_refused_as_not_a_regular_file(tmp_path: Path) -> None:
    for read in (load, read_bounded):
        with pytest.raises(ConfigurationError, match="is not a regular file") as caught:
            read(tmp_path)
        assert str(tmp_path) in str(caught.value)


@pytest.mark.integration
def test_explain_refuses_a_directory_as_bad_input(
        db: Database, neo4j_uri: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("THALABUS_CALIBRATION_FILE", str(tmp_path))
    assert main(["explain", '"cake"', "--uri", neo4j_uri, "--database", db.database]) == 2
    err = capsys.readouterr().err
    assert "is not a regular file" in err and "unexpected" not in err, err
