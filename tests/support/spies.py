"""Spies on the engine's database wrapper, for tests that count round trips."""

from __future__ import annotations

from typing import Any

import pytest

from thalabus_graph import ThalabusGraph


def spy_read_transactions(graph: ThalabusGraph, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of every read transaction the engine opens from now on (they still run)."""
    seen: list[str] = []
    real = graph.db.read_tx

    def spy(work: Any, *, what: str = "read") -> Any:
        seen.append(what)
        return real(work, what=what)

    monkeypatch.setattr(graph.db, "read_tx", spy)
    return seen
