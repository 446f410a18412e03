"""Which searches of a phrase's plan one ``search_phrase_filtered`` call runs: ``batched``.

A filtered phrase makes a search per source and per text index, each on the path and with the
``k`` the plan chose, and, fused, first reads its unrestricted statistics. ``batched`` picks
the searches one call can run, as a pure function of the phrase's plan, so explain (which
shows the call) and the run (``search.batch.PhraseBatch``, which makes it) agree.
"""

from __future__ import annotations

from thalabus_graph.plan.steps import (
    CategoryPattern,
    PhraseCall,
    PhrasePlan,
    Restriction,
    TextSearch,
    VectorSearch,
)

BATCHED_PATHS = ("exact", "index")
"""The vector search paths a batched call runs (the in-index path has its own statement)."""

BATCH = "search_phrase_filtered"
"""The statement that runs a phrase's batched searches (what explain and profile name)."""


def batched(plan: PhrasePlan) -> tuple[tuple[int, ...], ...]:
    """The groups of positions in ``plan.searches`` that one ``search_phrase_filtered`` call
    each runs: the restricted searches of one role (the results, or the fusion's fit on the
    scope's candidates) restricted alike, on the exact or index path, and the full-text
    searches restricted that way; the unrestricted statistics read before a restricted
    search (a ``PhraseCall`` whose fragments are not the results) go with the results. A
    group of one search is left out (its own statement). A pure function of the plan, so
    explain and the run agree."""
    groups: dict[tuple[str, Restriction | None, CategoryPattern | None], list[int]] = {}
    statistics: list[int] = []
    for i, search in enumerate(plan.searches):
        if isinstance(search, PhraseCall):
            if search.statistics and not search.results:
                statistics.append(i)
            continue
        if isinstance(search, VectorSearch):
            if not (search.filtered and search.path in BATCHED_PATHS):
                continue
        elif not isinstance(search, TextSearch) or search.k is None:
            continue
        groups.setdefault((search.role, search.restriction, search.category), []).append(i)
    out: list[tuple[int, ...]] = []
    for (role, _, _), positions in groups.items():
        if role == "results":
            positions, statistics = statistics + positions, []
        if len(positions) > 1:
            out.append(tuple(positions))
    return tuple(out)
