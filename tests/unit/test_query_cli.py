"""``thalabus-graph parse``: AST JSON on stdout, positioned errors on stderr with exit 2."""

from __future__ import annotations

import argparse
import io
import json

import pytest

from thalabus_graph.cli import build_parser, main


def test_parse_prints_the_ast(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", '"asylum seeker" AND COUNTRY_OF_ORIGIN=IQ']) == 0
    out = capsys.readouterr().out
    assert json.loads(out) == {
        "type": "AND",
        "left": {"type": "SEMANTIC", "text": "asylum seeker"},
        "right": {"type": "CATEGORY", "name": "COUNTRY_OF_ORIGIN", "values": ["IQ"]},
    }


def test_syntax_error_goes_to_stderr_with_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", '"a" AND']) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "error: expected a term" in captured.err
    assert "(at position 7)" in captured.err
    assert captured.err.rstrip().endswith("^")


def test_canonical_and_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "--canonical", "not 'a' and (\"b\" or \"c\")"]) == 0
    assert capsys.readouterr().out == "NOT 'a' AND (\"b\" OR \"c\")\n"
    for extra in ([], ["--compact"]):
        assert main(["parse", "--summary", *extra, '"a" AND NOT "b"']) == 0
        summary = json.loads(capsys.readouterr().out)
        assert summary["semantic_clauses"] == ["a"]
        assert summary["rerank_query"] == "a"
        assert summary["canonical"] == '"a" AND NOT "b"'
        assert summary["ast"]["type"] == "AND"


def test_reads_stdin_and_prints_deep_trees(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("(" * 3000 + '"a"' + ")" * 3000 + "\n"))
    assert main(["parse", "-"]) == 0
    assert json.loads(capsys.readouterr().out) == {"type": "SEMANTIC", "text": "a"}
    deep = " AND ".join(['"a"'] * 3000)
    monkeypatch.setenv("THALABUS_MAX_QUERY_TERMS", "3000")  # parse holds to the limits
    assert main(["parse", "--compact", deep]) == 0
    assert capsys.readouterr().out.count('"AND"') == 2999


def test_help_has_examples(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["parse", "--help"])
    assert "examples:" in capsys.readouterr().out


def test_query_help_states_the_quoting_rule_with_one_example_of_each_form(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["query", "--help"])
    shown = capsys.readouterr().out
    assert "a bare word is an error" in shown
    assert "\"...\"        searches by meaning" in shown
    assert "'...'        searches by text" in shown
    assert "thalabus-graph query '\"how do I clean a kitchen floor\"'   # by meaning" in shown
    assert "thalabus-graph query \"'kitchen floor'\"" in shown and "# by text" in shown


@pytest.mark.parametrize("language", ["klingon", "xx"])
def test_an_unknown_language_is_bad_input_before_any_connection(
        language: str, capsys: pytest.CaptureFixture[str]) -> None:
    commands = [name for name, sub in _subcommands().items()
                if any("--language" in a.option_strings for a in sub._actions)]
    assert {"query", "explain"} <= set(commands)
    for command in commands:
        with pytest.raises(SystemExit) as caught:
            main([command, '"chocolate cake recipe"', "--language", language])
        assert caught.value.code == 2
        err = capsys.readouterr().err
        assert f"unknown language {language!r}" in err and " de, " in err and " zh" in err


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    """Every sub-command's parser by its name (``datasets list`` as one name)."""
    out: dict[str, argparse.ArgumentParser] = {}
    stack: list[tuple[str, argparse.ArgumentParser]] = [("", build_parser())]
    while stack:
        prefix, parser = stack.pop()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    full = f"{prefix} {name}".strip()
                    out[full] = sub
                    stack.append((full, sub))
    return out


def test_the_top_level_help_shows_a_first_session() -> None:
    shown = build_parser().format_help()
    steps = [f"thalabus-graph {command}" for command in
             ("neo4j start", "migrate", "ingest", "query", "neo4j stop")]
    assert "examples" in shown and all(step in shown for step in steps), shown
    assert [shown.index(step) for step in steps] == sorted(shown.index(s) for s in steps)


def test_every_subcommand_help_shows_an_example_of_itself() -> None:
    missing = []
    for name, parser in sorted(_subcommands().items()):
        shown = parser.format_help()
        if "example" not in shown or f"thalabus-graph {name}" not in shown:
            missing.append(name)
    assert missing == []


@pytest.mark.parametrize("command", ["query", "explain", "parse"])
def test_a_query_the_shell_split_gets_the_quoting_hint(
        command: str, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in ([command, "kitchen", "floor"], [command, "kitchen", "floor", "--json"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "arrived as 2 arguments" in err
        assert "'\"kitchen floor\"' searches by meaning" in err
        assert "\"'kitchen floor'\" by text" in err


@pytest.mark.parametrize("command", ["query", "explain"])
def test_a_malformed_query_is_refused_before_connecting(
        command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command, "kitchen floor", "--uri", "bolt://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert "unexpected bare word 'kitchen': quote it" in err and "connect" not in err


def test_parse_holds_the_query_to_the_configured_limits(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("THALABUS_MAX_QUERY_TERMS", "2")
    assert main(["parse", '"a" OR "b" OR "c"']) == 2
    assert "max_query_terms" in capsys.readouterr().err
    monkeypatch.setenv("THALABUS_MAX_QUERY_CHARS", "10")
    monkeypatch.setattr("sys.stdin", io.StringIO('"' + "a" * 1_000_000 + '"'))
    assert main(["parse", "-"]) == 2
    assert "max_query_chars" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["query", "explain"])
def test_the_scope_flags_take_the_apis_names_and_their_short_forms(command: str) -> None:
    args = build_parser().parse_args([command, '"cat"', "--ontology-id", "asylum",
                                      "--subset-of-datasetids", "s#dataset_1",
                                      "--within", "s#dataset_2"])
    assert args.ontology == "asylum"
    assert args.within == ["s#dataset_1", "s#dataset_2"]
    short = build_parser().parse_args([command, '"cat"', "--ontology", "stories"])
    assert short.ontology == "stories" and short.within is None
