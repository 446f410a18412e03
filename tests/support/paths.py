"""The search paths a test expects: a restricted vector search forced onto the index path (the
test graphs are small enough for exact search everywhere, so a test of what a large graph does
overrides the path choice), and the statement an unscoped phrase runs (``phrase_call``: the
procedure plugin's on a server with this engine's plugin, the engine's own otherwise), and a
fused filtered one (``filtered_call``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from thalabus_graph import ThalabusGraph
from thalabus_graph.plan import cost
from thalabus_graph.plan.cost import Scope
from thalabus_graph.plan.steps import PathChoice, VectorSource
from thalabus_graph.search.procedure import ProcedureState
from thalabus_graph.settings import Settings


def force_index_path(monkeypatch: pytest.MonkeyPatch, k: Callable[[Scope, VectorSource], int],
                     reason: str) -> None:
    """Every restricted vector search the cost model would run exactly runs on the index path
    instead, asking the index for ``k(scope, source)`` candidates (``reason`` in its detail)."""
    real = cost.choose_vector_path

    def on_the_index(scope: Scope, tunables: Settings, src: VectorSource, top_n: int,
                     n_docs: int) -> PathChoice:
        choice = real(scope, tunables, src, top_n, n_docs)
        if choice.path != "exact":
            return choice
        return PathChoice("index", k(scope, src), choice.selectivity,
                          choice.estimated_fragments, reason)

    monkeypatch.setattr(cost, "choose_vector_path", on_the_index)


def phrase_call(graph: ThalabusGraph) -> tuple[str, str]:
    """The statement an unscoped phrase's one call runs on ``graph`` and the path its steps
    name: ``search_phrase_procedure`` / ``procedure`` where the procedure plugin runs it
    (``search.procedure``), ``search_phrase`` / ``index`` otherwise. Reads nothing once the
    connection's plugin state is known (the ``db`` fixture reads it)."""
    state = ProcedureState(graph.db, graph.settings)
    if state.available():
        return "search_phrase_procedure", "procedure"
    return "search_phrase", "index"


def filtered_call(graph: ThalabusGraph) -> str:
    """The statement a fused phrase filtered by categories runs on ``graph`` in an unscoped
    query: ``search_phrase_procedure`` where the procedure plugin runs it, the engine's
    ``search_phrase_filtered`` batch otherwise."""
    return phrase_call(graph)[0] if phrase_call(graph)[1] == "procedure" else (
        "search_phrase_filtered")
