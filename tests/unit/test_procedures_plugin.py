"""The procedure plugin's version and cache key, its jar layout and the switch that skips it.

No javac and no server here: the build itself runs in
``tests/integration/test_procedures_plugin.py``.
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from thalabus_graph.graph.launcher import Installation, LocalNeo4j, plugin
from thalabus_graph.graph.launcher.config import conf_text


@pytest.fixture()
def sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the plugin's Java sources that ``plugin`` reads instead of the shipped ones."""
    copy = tmp_path / "java"
    shutil.copytree(plugin.sources_root(), copy)
    monkeypatch.setattr(plugin, "sources_root", lambda: copy)
    return copy


def test_the_version_is_the_engine_version_and_a_source_fingerprint() -> None:
    engine, _, fingerprint = plugin.expected_version().partition("+")
    assert engine == plugin.engine_version() and engine
    assert fingerprint == plugin.source_fingerprint()[:12]
    assert all(c in "0123456789abcdef" for c in fingerprint) and len(fingerprint) == 12
    assert any(p.name == "Version.java" for p in plugin.java_sources())


def test_the_version_changes_when_a_source_changes_is_added_or_moves(sources: Path) -> None:
    before = plugin.expected_version()
    version = next(sources.rglob("Version.java"))
    version.write_text(version.read_text(encoding="utf-8") + "\n// edited\n", encoding="utf-8")
    edited = plugin.expected_version()
    assert edited != before
    extra = version.parent / "Extra.java"
    extra.write_text("package thalabus.procedures;\nfinal class Extra {}\n", encoding="utf-8")
    added = plugin.expected_version()
    assert added not in (before, edited)
    extra.rename(version.parent.parent / "Extra.java")  # same text, another path
    assert plugin.expected_version() not in (before, edited, added)


def test_the_build_key_names_the_java_release_and_follows_the_sources(
        sources: Path, tmp_path: Path) -> None:
    lts = Installation("5.26.31", tmp_path / "5.26.31", None)
    current = Installation("2026.09.0", tmp_path / "2026.09.0", None)
    assert plugin.build_key("5.26.31") == plugin.build_key("5.26.30")  # both --release 17
    assert plugin.build_key("5.26.31") != plugin.build_key("2026.09.0")
    assert plugin.jar_path(lts) == (tmp_path / "5.26.31" / f"plugins-{plugin.build_key('5.26.31')}"
                                    / "thalabus-procedures.jar")
    key = plugin.build_key("2026.09.0")
    next(sources.rglob("Version.java")).write_text("// another text\n", encoding="utf-8")
    assert plugin.build_key("2026.09.0") != key
    assert plugin.plugin_dir(current).name == f"plugins-{plugin.build_key('2026.09.0')}"


def test_the_jar_holds_classes_the_version_and_the_calibration(tmp_path: Path) -> None:
    classes = tmp_path / "classes" / "thalabus" / "procedures"
    classes.mkdir(parents=True)
    (classes / "Version.class").write_bytes(b"\xca\xfe\xba\xbe")
    jar = tmp_path / "p.jar"
    plugin.write_jar(jar, tmp_path / "classes")
    with zipfile.ZipFile(jar) as archive:
        names = set(archive.namelist())
        properties = archive.read(plugin.PROPERTIES_NAME).decode()
    assert {"META-INF/MANIFEST.MF", "thalabus/procedures/Version.class",
            "calibration/multilingual-e5-small.json"} <= names
    assert properties == f"version={plugin.expected_version()}\n"


def test_the_launcher_installs_the_plugin_unless_told_not_to() -> None:
    assert LocalNeo4j(version="5.26.31", data_dir=Path("/nonexistent/thalabus")).procedures
    assert not LocalNeo4j(version="5.26.31", data_dir=Path("/nonexistent/thalabus"),
                          procedures=False).procedures


def test_the_conf_names_the_plugin_folder_only_when_given(tmp_path: Path) -> None:
    assert "plugins" not in conf_text(page_cache="2g", transaction_memory="1g")
    text = conf_text(page_cache="2g", transaction_memory="1g", plugins=tmp_path)
    assert f"server.directories.plugins={tmp_path}\n" in text
