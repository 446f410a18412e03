"""The README says every command takes ``--json``, ``-v`` and ``--help``: every sub-command of
the parser does (nested groups such as ``neo4j start`` included)."""

from __future__ import annotations

import argparse
import json

import pytest

from thalabus_graph.cli import build_parser, main


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
             ) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every leaf command (one that runs) under ``parser``, with its words."""
    out: list[tuple[tuple[str, ...], argparse.ArgumentParser]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += commands(sub, (*path, name))
    return out or [(path, parser)]


def test_every_command_takes_json_verbose_and_help() -> None:
    found = commands(build_parser())
    assert len(found) > 20
    for words, parser in found:
        options = {o for action in parser._actions for o in action.option_strings}
        assert {"--json", "-v", "--help"} <= options, words


@pytest.mark.parametrize("json_wanted", [True, False])
def test_a_usage_error_is_one_line_and_json_when_asked(
        capsys: pytest.CaptureFixture[str], json_wanted: bool) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["query", '"x"', "--limit", "abc", *(["--json"] if json_wanted else [])])
    assert stopped.value.code == 2
    out, err = capsys.readouterr()
    assert len(err.strip().splitlines()) == 1 and "--limit" in err
    if json_wanted:
        assert json.loads(out)["error"]["type"] == "UsageError"
    else:
        assert out == ""
