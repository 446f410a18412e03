"""Which Neo4j version a start runs when none is named: pure, no JVM started."""

from __future__ import annotations

from pathlib import Path

import pytest

from thalabus_graph.errors import LauncherError
from thalabus_graph.graph.launcher import install
from thalabus_graph.graph.launcher.install import CURRENT_VERSION, LTS_VERSION, default_version
from thalabus_graph.graph.launcher.java import JavaInstallation, calendar_line
from thalabus_graph.graph.launcher.process import DataDir
from thalabus_graph.graph.launcher.server import LocalNeo4j


@pytest.fixture(autouse=True)
def _no_named_version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("THALABUS_NEO4J_VERSION", raising=False)


def _jdks(monkeypatch: pytest.MonkeyPatch, *, has_21: bool) -> None:
    def find_java(version: str, java_home: Path | str | None = None) -> JavaInstallation:
        if version == CURRENT_VERSION and not has_21:
            raise LauncherError("no suitable JDK found")
        return JavaInstallation(Path("/jdk"), 21 if has_21 else 17)
    monkeypatch.setattr(install, "find_java", find_java)


@pytest.mark.parametrize(("has_21", "expected"), [(True, CURRENT_VERSION), (False, LTS_VERSION)])
def test_a_new_store_gets_the_newest_line_the_machine_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, has_21: bool, expected: str) -> None:
    _jdks(monkeypatch, has_21=has_21)
    assert default_version(DataDir(tmp_path)) == expected
    assert default_version() == expected


def test_a_store_keeps_the_version_that_last_ran_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _jdks(monkeypatch, has_21=True)
    data = DataDir(tmp_path)
    data.record_version(LTS_VERSION)
    assert data.recorded_version() == LTS_VERSION
    assert default_version(data) == LTS_VERSION


def test_a_store_from_before_the_record_is_the_lts_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _jdks(monkeypatch, has_21=True)
    (tmp_path / "data" / "databases").mkdir(parents=True)
    assert default_version(DataDir(tmp_path)) == LTS_VERSION


def test_a_named_version_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _jdks(monkeypatch, has_21=True)
    data = DataDir(tmp_path)
    data.record_version(LTS_VERSION)
    monkeypatch.setenv("THALABUS_NEO4J_VERSION", "2026.01.0")
    assert default_version(data) == "2026.01.0"


def test_an_unreadable_record_counts_as_none(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    _jdks(monkeypatch, has_21=True)
    (tmp_path / "neo4j.store.json").write_text("{not json", encoding="utf-8")
    assert default_version(DataDir(tmp_path)) == CURRENT_VERSION


@pytest.mark.parametrize(("version", "calendar"), [
    ("5.26.31", False), ("5.26.0", False), ("2025.01.0", True), ("2026.09.0", True),
    ("2026.09.0-rc1", True), ("x.1", False)])
def test_the_calendar_line_is_2025_on(version: str, calendar: bool) -> None:
    assert calendar_line(version) is calendar


def test_a_5x_start_on_a_store_the_calendar_line_ran_is_refused_before_any_work(
        tmp_path: Path) -> None:
    """Neo4j 5 cannot open a store a 2026 server upgraded; the launcher says so and how to
    start it, instead of downloading 5.26 and failing inside Neo4j."""
    DataDir(tmp_path).record_version(CURRENT_VERSION)
    local = LocalNeo4j(version=LTS_VERSION, data_dir=tmp_path,
                       cache_dir=tmp_path / "no-cache")
    with pytest.raises(LauncherError, match=f"last run by Neo4j {CURRENT_VERSION}"):
        local.start()
    assert not (tmp_path / "no-cache").exists()  # nothing installed
    assert DataDir(tmp_path).recorded_version() == CURRENT_VERSION
