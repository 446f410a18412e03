"""Every float flag of the CLI refuses NaN, infinities and out-of-range numbers at parse time.

``float()`` accepts ``nan``, ``inf`` and ``1e999``; a NaN timeout compares false with every
deadline, so ``neo4j stop --timeout nan`` would SIGKILL at once and ``start --timeout nan``
would wait forever. The parser refuses such text (exit 2) before any handler runs.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from thalabus_graph.cli import build_parser

HOSTILE = ("nan", "NaN", "inf", "-inf", "infinity", "1e999", "-1e999")

FLAGS = [
    (["neo4j", "start"], "--timeout"),
    (["neo4j", "stop"], "--timeout"),
    (["migrate"], "--lock-timeout"),
    (["rerank", "s#dataset_1"], "--threshold"),
    (["rerank", "s#dataset_1"], "--percentile"),
    (["goal", "show", "g1"], "--min-score"),
    (["goal", "show", "g1"], "--min-retrieval-score"),
    (["calibrate", "--corpus", "c", "--queries", "q", "--qrels", "r"], "--held-out"),
]


def _float_actions(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
                   ) -> Iterator[tuple[tuple[str, ...], argparse.Action]]:
    """Every option of every sub-command whose type parses a number with a fraction."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _float_actions(sub, (*path, name))
        elif action.type is not None and action.type not in (int, str) and callable(action.type):
            try:
                parsed = action.type("0.5")
            except (argparse.ArgumentTypeError, ValueError, TypeError):
                continue
            if isinstance(parsed, float):
                yield path, action


def _exit_code(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args(argv)
    return int(stopped.value.code or 0), capsys.readouterr().err


def test_every_float_flag_of_the_cli_is_listed_here() -> None:
    found = {(path, action.option_strings[-1]) for path, action in _float_actions(build_parser())}
    listed = {(tuple(argv[:2] if argv[0] in ("neo4j", "goal") else argv[:1]), flag)
              for argv, flag in FLAGS}
    assert found == listed
    assert all(action.type is not float for _, action in _float_actions(build_parser()))


@pytest.mark.parametrize(("argv", "flag"), FLAGS)
def test_float_flags_refuse_nan_and_infinities(argv: list[str], flag: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    for text in HOSTILE:
        code, err = _exit_code([*argv, f"{flag}={text}"], capsys)
        assert code == 2, (flag, text)
        assert flag in err and "finite" in err, err
    args = build_parser().parse_args([*argv, flag, "0.25"])
    assert getattr(args, flag.lstrip("-").replace("-", "_")) == 0.25


@pytest.mark.parametrize(("argv", "flag", "text"), [
    (["neo4j", "stop"], "--timeout", "-1"),
    (["neo4j", "start"], "--timeout", "-0.5"),
    (["migrate"], "--lock-timeout", "-3"),
    (["rerank", "s#dataset_1"], "--percentile", "100.5"),
    (["goal", "show", "g1"], "--min-retrieval-score", "1.5"),
    (["neo4j", "stop"], "--timeout", "soon"),
])
def test_float_flags_refuse_numbers_outside_their_range(
        argv: list[str], flag: str, text: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _exit_code([*argv, f"{flag}={text}"], capsys)
    assert code == 2 and flag in err and text in err, err


def test_a_reranker_threshold_may_be_negative() -> None:
    """Reranker scores are uncalibrated logits: a negative threshold is a real choice."""
    args = build_parser().parse_args(["rerank", "s#dataset_1", "--threshold", "-2.5"])
    assert args.threshold == -2.5
