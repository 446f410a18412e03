"""Hostile session names and goal ids never reach Neo4j (a clear DatasetError, nothing
written), stored names print escaped, and an id list given as one string is one id."""

from __future__ import annotations

import json

import pytest

from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.cli import main
from thalabus_graph.errors import ConfigurationError, DatasetError, DatasetInputError
from thalabus_graph.graph.database import Database

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(("session", "message"), [
    ("s\ud800", "lone surrogate"),
    ("s" * 3000, "MAX_KEY_BYTES = 2048"),
    ("a#b", "no '#'"),
])
def test_a_hostile_session_name_is_refused_before_writing(
        clean_db: Database, session: str, message: str) -> None:
    graph = ThalabusGraph(clean_db, settings=Settings.from_env())
    graph.ingest([{"documentid": "hs-1", "categories": {"KIND": "x"}}], progress=False,
                 embed=False)
    with pytest.raises(DatasetError, match=message):
        graph.query("KIND=x", create_dataset=True, session=session)
    rows = clean_db.driver.execute_query("MATCH (d:Dataset) RETURN count(d) AS n",
                                         database_=clean_db.database).records
    assert rows[0]["n"] == 0


def test_a_session_name_with_control_or_bidi_characters_prints_escaped(
        clean_db: Database, neo4j_uri: str, capsys: pytest.CaptureFixture[str]) -> None:
    graph = ThalabusGraph(clean_db, settings=Settings.from_env())
    graph.ingest([{"documentid": "hs-1", "categories": {"KIND": "x"}}], progress=False,
                 embed=False)
    for session in ("two\nlines", "nul\x00here", "rtl\u202eevil"):
        graph.query("KIND=x", create_dataset=True, session=session)
    assert main(["datasets", "list", "--uri", neo4j_uri]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    shown = "\n".join(lines)
    for escaped in ("two\\nlines#", "nul\\x00here#", "rtl\\u202eevil#"):
        assert escaped in shown
    assert "\x00" not in shown and "\u202e" not in shown
    assert main(["datasets", "list", "--uri", neo4j_uri, "--json"]) == 0
    listed = {row["datasetid"].split("#")[0] for row in json.loads(capsys.readouterr().out)}
    assert listed == {"two\nlines", "nul\x00here", "rtl\u202eevil"}  # JSON stays exact


def test_a_goal_id_over_the_key_limit_is_refused_clearly(clean_db: Database) -> None:
    graph = ThalabusGraph(clean_db, settings=Settings.from_env())
    graph.ingest([{"documentid": "hs-1", "categories": {"KIND": "x"}}], progress=False,
                 embed=False)
    dataset = graph.query("KIND=x", create_dataset=True).dataset_ids[0]
    goal = "g" * 9000
    for attempt in (lambda: graph.goals.use_dataset(goal, dataset),
                    lambda: graph.goals.load_document(goal, "hs-1"),
                    lambda: graph.goals.context(goal),
                    lambda: graph.rag_fragments("KIND=x", goal=goal)):
        with pytest.raises(DatasetInputError, match="MAX_KEY_BYTES = 2048"):
            attempt()
    rows = clean_db.driver.execute_query("MATCH (g:Goal) RETURN count(g) AS n",
                                         database_=clean_db.database).records
    assert rows[0]["n"] == 0


def test_a_string_where_a_list_of_ids_is_wanted_is_one_id(clean_db: Database) -> None:
    graph = ThalabusGraph(clean_db, settings=Settings.from_env())
    graph.ingest([{"documentid": f"hs-{i}", "categories": {"KIND": "x"}} for i in (1, 2)],
                 progress=False, embed=False)
    dataset = graph.query("KIND=x", create_dataset=True).dataset_ids[0]
    graph.datasets.hide(dataset, "hs-2")  # type: ignore[arg-type]
    within = graph.query("KIND=x", subset_of_datasetids=dataset)  # type: ignore[arg-type]
    assert [d.documentid for d in within.documents or []] == ["hs-1"]
    assert [d.documentid for d in graph.query("KIND=x", subset_of_datasetids=[dataset]
                                              ).documents or []] == ["hs-1"]
    with pytest.raises(ConfigurationError, match="must be strings"):
        graph.query("KIND=x", subset_of_datasetids=[3])  # type: ignore[list-item]


def test_stored_names_print_escaped_in_every_cli_line_that_names_them(
        clean_db: Database, neo4j_uri: str, capsys: pytest.CaptureFixture[str]) -> None:
    graph = ThalabusGraph(clean_db, settings=Settings.from_env())
    graph.ingest([{"documentid": "hs-1", "categories": {"KIND": "x"}}], progress=False,
                 embed=False)
    (dataset,) = graph.query("KIND=x", create_dataset=True,
                             session="esc\x1b[31m\u202e").dataset_ids
    goal = "goal\nforged line"
    uri = ["--uri", neo4j_uri]
    assert main(["goal", "use", goal, dataset, *uri]) == 0
    assert main(["goal", "load", goal, "hs-1", *uri]) == 0
    assert main(["goal", "show", goal, *uri]) == 0
    assert main(["rerank", dataset, *uri]) == 0
    assert main(["datasets", "hide", dataset, "not\x00a-member", *uri]) == 2
    captured = capsys.readouterr()
    for stream in (captured.out, captured.err):
        printed = stream.split("\n--\n")[0]  # the goal's message below "--" is the LLM's text
        for raw in ("\x1b", "\u202e", "\x00", "goal\nforged"):
            assert raw not in printed, (raw, printed)
    assert "esc\\x1b[31m\\u202e#dataset_1" in captured.out
    assert "goal\\nforged line" in captured.out
