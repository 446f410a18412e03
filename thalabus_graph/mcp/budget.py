"""The output budget: every tool answer fits in a number of characters an agent's context can
afford, and says what was cut and how to get the rest.

A list answer (hits, members, fragments, categories) is fitted in one of two ways:
``snippets`` first cuts every text to the longest of ``TEXT_CAPS`` at which the whole page
fits (many hits with shorter texts: a result list), then leaves trailing items out;
``whole`` first leaves trailing items out and cuts texts only when one item alone does not
fit (a goal's context: its texts are what the agent asked for). The items left out are the
next page (``offset``). A nested answer (an explain plan) is pruned instead: long lists keep
their first items and a count of the rest, long strings are cut.

Sizes are measured as the answer's text content: its JSON indented by two spaces, the form
the SDK sends beside the structured content and most hosts hand to the model.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Literal

from thalabus_graph.mcp.schemas import OutputCut

DEFAULT_OUTPUT_CHARS = 8000
"""The default character budget per tool output (``thalabus-graph mcp --output-chars``)."""
MIN_OUTPUT_CHARS = 1000
"""The smallest budget the server accepts: one hit with its fields and a note fit in it."""
TEXT_CAPS = (2000, 1000, 500, 200, 80)
"""Text lengths tried, longest first, when texts are cut to fit a page."""
THIN_BELOW = 500
"""Text length below which ``fit_page`` first thins nested lists (``thin``)."""
WARNINGS_KEPT = 20
"""Warnings kept when an answer's warnings alone crowd the budget."""
ELLIPSIS = "…"

Fitting = Literal["snippets", "whole"]


NOTE_ROOM = 600
"""Characters kept free for the ``cut`` field while an answer is fitted."""


def size(data: Any) -> int:
    """Characters of ``data`` as the tool's text content (JSON, indent 2)."""
    return len(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def cut_text(text: str | None, cap: int) -> str | None:
    """``text`` cut to ``cap`` characters (the last one ``…``) when longer."""
    if text is None or len(text) <= cap:
        return text
    return text[: max(cap - 1, 0)] + ELLIPSIS


def _cut_texts(value: Any, cap: int) -> Any:
    """A copy of ``value`` with every ``"text"`` string field cut to ``cap``."""
    if isinstance(value, dict):
        return {k: (cut_text(v, cap) if k == "text" and isinstance(v, str) else
                    _cut_texts(v, cap)) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut_texts(v, cap) for v in value]
    return value


def _longest_fitting(total: int, fits: Callable[[int], bool]) -> int:
    """The largest ``k`` in ``0..total`` with ``fits(k)`` (``fits`` is monotone; ``fits(0)``
    is assumed)."""
    low, high = 0, total
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low


def fit_page(data: dict[str, Any], key: str, budget: int, *, fitting: Fitting,
             offset: int, more: str, thin: str | None = None) -> dict[str, Any]:
    """``data`` (a list answer's JSON form, its page under ``key``) within ``budget``
    characters; sets ``cut`` (and ``next_offset`` when items were left out) when it cut.

    ``more`` says how to get what was left out (e.g. "call again with offset=N"), with
    ``{next}`` standing for the next page's offset. ``thin``: a list field of the items (a
    document's fragments) cut to its first entry before texts are cut below ``THIN_BELOW``
    characters, so a page keeps more items with readable texts.
    """
    if size(data) <= budget:
        return data
    data = dict(data)
    notes: list[str] = []
    warnings = data.get("warnings")
    if isinstance(warnings, list) and len(warnings) > WARNINGS_KEPT:
        data["warnings"] = warnings[:WARNINGS_KEPT]
        notes.append(f"{len(warnings) - WARNINGS_KEPT} of {len(warnings)} warnings left out")
    items: list[Any] = list(data[key])
    cap: int | None = None

    def fits(page: list[Any]) -> bool:
        return size({**data, key: page}) + NOTE_ROOM <= budget  # room for the cut note

    if fitting == "snippets":
        tried = next((c for c in TEXT_CAPS if fits(_cut_texts(items, c))), TEXT_CAPS[-1])
        if thin is not None and tried < THIN_BELOW:
            thinned = [{**item, thin: item[thin][:1]} if isinstance(item.get(thin), list)
                       else item for item in items]
            if thinned != items:
                items = thinned
                notes.append(f"{thin} cut to the best one per item")
                tried = next((c for c in TEXT_CAPS if fits(_cut_texts(items, c))),
                             TEXT_CAPS[-1])
        cut = _cut_texts(items, tried)
        if cut != items:
            items, cap = cut, tried
    kept = _longest_fitting(len(items), lambda k: fits(items[:k]))
    if kept == 0 and items:
        caps = TEXT_CAPS if cap is None else TEXT_CAPS[TEXT_CAPS.index(cap):]
        cap = next((c for c in caps if fits(_cut_texts(items[:1], c))), caps[-1])
        items = _cut_texts(items, cap)
        kept = 1 if fits(items[:1]) else 0
    left_out = len(items) - kept
    data[key] = items[:kept]
    if cap is not None:
        notes.append(f"texts cut to {cap} characters (ending in {ELLIPSIS})")
    if left_out:
        next_offset = offset + kept
        data["next_offset"] = next_offset
        notes.append(f"{left_out} of {len(items)} items of this page left out: "
                     + more.format(next=next_offset))
    data["cut"] = OutputCut(budget=budget, texts_cut_to=cap, left_out=left_out,
                            note=f"output budget {budget} characters: "
                            + "; ".join(notes)).model_dump()
    return data


def _prune(value: Any, items: int, chars: int) -> Any:
    """``value`` with lists cut to ``items`` entries (then ``{"more": n}``) and strings to
    ``chars`` characters, at every depth."""
    if isinstance(value, dict):
        return {k: _prune(v, items, chars) for k, v in value.items()}
    if isinstance(value, list):
        kept = [_prune(v, items, chars) for v in value[:items]]
        return kept + ([{"more": len(value) - items}] if len(value) > items else [])
    if isinstance(value, str):
        return cut_text(value, chars)
    return value


PRUNING: Sequence[tuple[int, int]] = ((20, 400), (10, 200), (5, 120), (3, 80), (1, 60))
"""(list entries, string characters) tried in order when a nested answer is pruned."""


def fit_tree(data: dict[str, Any], budget: int, *, droppable: Sequence[str], tree: str,
             more: str) -> dict[str, Any]:
    """``data`` within ``budget``: first the fields in ``droppable`` are emptied, then the
    nested field ``tree`` is pruned (``_prune``) until it fits; sets ``cut`` saying what was
    done and ``more`` (how to get the whole)."""
    if size(data) <= budget:
        return data
    data = dict(data)
    notes: list[str] = []
    for name in droppable:
        if size(data) + NOTE_ROOM <= budget:
            break
        empty: Any = {} if isinstance(data[name], dict) else []
        data[name] = empty
        notes.append(f"{name} left out")
    if size(data) + NOTE_ROOM > budget:
        whole = data[tree]
        for items, chars in PRUNING:
            data[tree] = _prune(whole, items, chars)
            if size(data) + NOTE_ROOM <= budget:
                break
        else:
            data[tree] = {"left_out": "the whole of it: it does not fit the budget"}
        notes.append(f"{tree} pruned: long lists keep their first entries and "
                     "{\"more\": n}, long strings end in " + ELLIPSIS)
    data["cut"] = OutputCut(budget=budget, note=f"output budget {budget} characters: "
                            + "; ".join(notes) + "; " + more).model_dump()
    return data


__all__ = ["DEFAULT_OUTPUT_CHARS", "MIN_OUTPUT_CHARS", "TEXT_CAPS", "cut_text", "fit_page",
           "fit_tree", "size"]
