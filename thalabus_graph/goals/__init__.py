"""Goals: what a goal uses and the RAG context built from it (``ThalabusGraph.goals``).

The package's modules, each with one job:

- ``collect``: ``Goals``, attaching datasets, fragments and documents to a goal and collecting
  its context from the graph (thresholds by weight scale, fill-up, budgets);
- ``picking``: which members a context takes within a budget, each text once;
- ``context``: the context's values (``GoalContext``, ``LoadedDocument``) and message lines.
"""

from __future__ import annotations

from thalabus_graph.goals.collect import Goals
from thalabus_graph.goals.context import (
    ELLIPSIS,
    GoalContext,
    LoadedDocument,
    category_only_lines,
    truncate_lines,
)
from thalabus_graph.goals.picking import without_repeats

__all__ = [
    "ELLIPSIS",
    "GoalContext",
    "Goals",
    "LoadedDocument",
    "category_only_lines",
    "truncate_lines",
    "without_repeats",
]
