"""The Cypher procedure plugin's jar, built with javac against one Neo4j version's cached jars.

The jar holds the classes of every ``.java`` file under ``resources/procedures/src/main/java``,
``thalabus-procedures.properties`` (the version ``thalabus.version()`` yields) and the shipped
calibration files under ``calibration/``. It is built once per Neo4j version and source
fingerprint into ``<version cache>/plugins-<key>/thalabus-procedures.jar``: the folder holds
nothing else, so the launcher points Neo4j's plugin directory straight at it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import tomllib
import zipfile
from importlib import metadata, resources
from pathlib import Path

from thalabus_graph.errors import LauncherError
from thalabus_graph.graph import cypher_library
from thalabus_graph.graph.launcher.install import Installation, _run_tool
from thalabus_graph.graph.launcher.java import JavaInstallation, find_java, java_major_range
from thalabus_graph.graph.launcher.process import _file_lock
from thalabus_graph.languages import LANGUAGES
from thalabus_graph.settings import CHOICES, Settings, plain_values
from thalabus_graph.settings_values import RANGES

JAR_NAME = "thalabus-procedures.jar"
PROPERTIES_NAME = "thalabus-procedures.properties"
"""The jar resource ``BuildInfo.version()`` reads; key ``version``."""
DISTRIBUTION = "thalabus-graph"
logger = logging.getLogger(__name__)


def _package_dir(*parts: str) -> Path:
    """A folder shipped inside the ``thalabus_graph`` package."""
    return Path(str(resources.files("thalabus_graph").joinpath(*parts)))


def sources_root() -> Path:
    """The plugin's Java source root (``.../procedures/src/main/java``)."""
    return _package_dir("resources", "procedures", "src", "main", "java")


def java_sources() -> list[Path]:
    """Every ``.java`` file of the plugin, in a stable order."""
    return sorted(sources_root().rglob("*.java"))


def jar_resources() -> dict[str, bytes]:
    """The files the jar carries besides its classes and properties: jar path -> bytes.

    Each is the engine's own, so the Java rules read one source of truth: the calibration
    files (``calibration/<model>.json``, as shipped in ``thalabus_graph/resources/calibration``),
    the settings' defaults (``settings.json``: every ``Settings`` field with a plain value,
    secrets left out, environment overrides not read) and the rules an override must keep
    (``settings_rules.json``: the numeric ranges and the words a setting takes), the
    languages with a full-text analyzer (``languages.json``) and the phrase's search
    statements in the form the plugin runs them (``cypher/search_phrase_nodes.cypher``, and
    ``cypher/search_phrase_filtered.cypher`` unscoped, for a filtered phrase's restricted
    searches).
    """
    folder = _package_dir("resources", "calibration")
    out = {f"calibration/{path.name}": path.read_bytes()
           for path in sorted(folder.glob("*.json"))}
    out["settings.json"] = json.dumps(plain_values(Settings()), sort_keys=True).encode()
    out["settings_rules.json"] = json.dumps(
        {"ranges": {name: list(bounds) for name, bounds in RANGES.items()},
         "choices": {name: list(words) for name, words in CHOICES.items()}},
        sort_keys=True).encode()
    out["languages.json"] = json.dumps(dict(sorted(LANGUAGES.items()))).encode()
    out["cypher/search_phrase_nodes.cypher"] = cypher_library.load(
        "search_phrase_nodes", {}).encode()
    out["cypher/search_phrase_filtered.cypher"] = cypher_library.load(
        "search_phrase_filtered", {}).encode()
    return out


def source_fingerprint() -> str:
    """sha256 (hex) over each Java source's path and text and each jar resource's name and
    bytes: any change to what the jar is made of changes it."""
    digest = hashlib.sha256()
    root = sources_root()
    for path in java_sources():
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    for name, data in jar_resources().items():
        digest.update(name.encode() + b"\0" + data + b"\0")
    return digest.hexdigest()


def engine_version() -> str:
    """The installed distribution's version; in a checkout without one, pyproject's."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        pyproject = Path(__file__).resolve().parents[3] / "pyproject.toml"
        try:
            project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
            return str(project["version"])
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            return "0+unknown"


def expected_version() -> str:
    """What ``CALL thalabus.version()`` yields on a server running the plugin this engine
    ships: ``<engine version>+<first 12 hex of source_fingerprint()>``. Another value (or no
    such procedure) means the server's plugin is not this engine's."""
    return f"{engine_version()}+{source_fingerprint()[:12]}"


def build_key(neo4j_version: str) -> str:
    """16 hex naming one build: the expected version, the full fingerprint and the Java
    release the classes target (Neo4j's oldest Java for ``neo4j_version``)."""
    low, _ = java_major_range(neo4j_version)
    text = f"{expected_version()}\n{source_fingerprint()}\n{low}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def plugin_dir(installation: Installation) -> Path:
    """The folder holding only this build's jar (what Neo4j's plugin directory is set to)."""
    return installation.cache_dir / f"plugins-{build_key(installation.version)}"


def jar_path(installation: Installation) -> Path:
    """Where this build's jar is (or will be, once ``build`` ran)."""
    return plugin_dir(installation) / JAR_NAME


def build(installation: Installation, java: JavaInstallation | None = None) -> Path:
    """The jar for ``installation``'s Neo4j version: installed (Maven, once) and compiled
    when missing, else the cached one. Safe under concurrent processes; returns its path.

    Raises ``LauncherError`` when the Neo4j jars cannot be resolved or javac fails.
    """
    target = jar_path(installation)
    if target.is_file():
        return target
    installation.install()
    java = java or find_java(installation.version, installation.java_home)
    if not java.javac.is_file():
        raise LauncherError(f"{java.home} has no javac: the procedure plugin needs a full JDK")
    try:
        with _file_lock(installation.cache_dir / "plugins.lock"):
            if not target.is_file():
                _compile(installation, java, target)
    except OSError as exc:
        raise LauncherError(f"cannot write the procedure plugin to {target.parent}: {exc}") \
            from exc
    return target


def _compile(installation: Installation, java: JavaInstallation, target: Path) -> None:
    """javac every source against the version's jars, then write the jar and move it in."""
    sources = java_sources()
    if not sources:
        raise LauncherError(f"no Java sources of the procedure plugin under {sources_root()}")
    low, _ = java_major_range(installation.version)
    with tempfile.TemporaryDirectory(prefix="plugin-", dir=installation.cache_dir) as tmp:
        work = Path(tmp)
        out = work / "classes"
        _run_tool(
            [str(java.javac), "--release", str(low), "-encoding", "UTF-8", "-nowarn",
             "-proc:none", "-d", str(out), "-cp", installation.classpath(with_launcher=False),
             *map(str, sources)],
            cwd=work, env=dict(os.environ), timeout=600,
            what=f"javac of the procedure plugin for Neo4j {installation.version}",
        )
        staged = work / JAR_NAME
        write_jar(staged, out)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staged, target)


def write_jar(jar: Path, classes: Path) -> None:
    """A jar of the compiled ``classes``, the version properties and ``jar_resources()``."""
    version = expected_version()
    manifest = ("Manifest-Version: 1.0\r\nImplementation-Title: thalabus-procedures\r\n"
                f"Implementation-Version: {version}\r\n\r\n")
    with zipfile.ZipFile(jar, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("META-INF/MANIFEST.MF", manifest)
        for path in sorted(classes.rglob("*.class")):
            archive.write(path, path.relative_to(classes).as_posix())
        archive.writestr(PROPERTIES_NAME, f"version={version}\n")
        for name, data in jar_resources().items():
            archive.writestr(name, data)


def plugin_dir_for_start(installation: Installation,
                         java: JavaInstallation | None = None) -> Path | None:
    """The plugin folder a start points Neo4j at; None (with a warning) when the build fails,
    as the engine works without the plugin."""
    try:
        return build(installation, java).parent
    except LauncherError as exc:
        logger.warning("Neo4j %s starts without the thalabus procedures: %s",
                       installation.version, exc)
        return None
