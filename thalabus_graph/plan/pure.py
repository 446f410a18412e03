"""A pure filter query streamed from one statement (``search_filter_documents``).

A query made only of category terms under AND / OR / NOT (optionally scoped) needs no set
algebra in Python: its disjunctive normal form (``plan.rewrite.filter_pattern``) is the
``$filter`` parameter of one statement that returns the matching documents of the scope,
ordered, which the driver streams row by row (``search.filter_stream``). This module holds
the step both explain and the run show for it.
"""

from __future__ import annotations

from typing import Any

from thalabus_graph.plan.statistics import Statistics
from thalabus_graph.plan.steps import FilterPattern

STATEMENT = "search_filter_documents"
def stream_detail(ex: Statistics, pattern: FilterPattern) -> dict[str, Any]:
    """The step both readers show for a streamed pure filter (explain plans it, the run
    records it)."""
    detail: dict[str, Any] = {"streamed": True, "category_pattern": pattern.to_dict(),
                              "reason": "a pure filter: one statement, its stubs streamed"}
    scope = ex.reads.sized().pattern_parameters()
    if scope["ontologyid"] is not None:
        detail["ontology_pattern"] = scope["ontologyid"]
    if scope["datasetids"] is not None:
        detail["dataset_pattern"] = scope["datasetids"]
    if ex.stream_limit is not None:
        detail["limit"] = ex.stream_limit
    return detail
