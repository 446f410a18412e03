"""Spies on the engine's database wrapper, for tests that count round trips, and a counter
of the calls a piece of work makes, for tests that measure work instead of time."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest

from thalabus_graph import ThalabusGraph


def count_calls(work: Callable[[], object]) -> int:
    """The Python and C function calls ``work()`` makes: its work, counted instead of
    timed, so that a loaded machine cannot change a test's answer. Calls on other threads
    are not counted."""
    count = 0

    def profile(frame: FrameType, event: str, arg: object) -> None:
        nonlocal count
        count += 1

    sys.setprofile(profile)
    try:
        work()
    finally:
        sys.setprofile(None)
    return count


def spy_read_transactions(graph: ThalabusGraph, monkeypatch: pytest.MonkeyPatch,
                          before: Callable[[str], None] | None = None) -> list[str]:
    """The name of every named read statement the engine runs from now on (each one round
    trip, in its own read transaction or in the one a query holds open,
    ``Database.one_read``; they still run); ``before`` is called with each name just before
    it runs (on the caller's thread, which may be one of the engine's)."""
    seen: list[str] = []
    real = graph.db._read

    def spy(work: Any, *, what: str = "read") -> Any:
        seen.append(what)
        if before is not None:
            before(what)
        return real(work, what=what)

    monkeypatch.setattr(graph.db, "_read", spy)
    return seen


def spy_transactions(graph: ThalabusGraph, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What every read transaction the engine opens from now on is for (its ``what``: a
    statement's name, or ``query`` for the one a query holds open)."""
    seen: list[str] = []
    for method in ("read_tx", "read_alone"):  # managed, and a statement's auto-commit one
        real = getattr(graph.db, method)

        def spy(work: Any, *, what: str = "read", real: Any = real) -> Any:
            seen.append(what)
            return real(work, what=what)

        monkeypatch.setattr(graph.db, method, spy)
    return seen
