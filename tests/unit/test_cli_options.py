"""The README says every command takes ``--json``, ``-v`` and ``--help``: every sub-command of
the parser does (nested groups such as ``neo4j start`` included)."""

from __future__ import annotations

import argparse

from thalabus_graph.cli import build_parser


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
