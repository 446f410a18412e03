"""The output budget: a list answer fits its budget, says what it cut, and the items it left
out are the next page; a nested answer is pruned to fit; the CLI states the same defaults."""

from __future__ import annotations

from typing import Any

from thalabus_graph.cli import mcp_cmd
from thalabus_graph.mcp import budget
from thalabus_graph.mcp.budget import fit_page, fit_tree, size
from thalabus_graph.mcp.tools import warnings_out


def page(n: int, chars: int) -> dict[str, Any]:
    return {"query": "q", "items": [{"id": i, "text": "x" * chars} for i in range(n)],
            "next_offset": None, "cut": None}


def test_a_page_within_budget_is_unchanged() -> None:
    data = page(3, 10)
    assert fit_page(data, "items", 2000, fitting="snippets", offset=0, more="") == data


def test_snippets_cut_texts_before_leaving_items_out() -> None:
    out = fit_page(page(10, 2000), "items", 4000, fitting="snippets", offset=0,
                   more="offset={next}")
    assert size(out) <= 4000 and out["cut"]["texts_cut_to"] is not None
    assert all(len(item["text"]) <= out["cut"]["texts_cut_to"] for item in out["items"])
    if out["cut"]["left_out"]:
        assert out["next_offset"] == len(out["items"])


def test_whole_leaves_items_out_and_keeps_their_texts() -> None:
    out = fit_page(page(10, 1500), "items", 4000, fitting="whole", offset=5,
                   more="offset={next}")
    assert size(out) <= 4000 and out["cut"]["texts_cut_to"] is None
    assert all(len(item["text"]) == 1500 for item in out["items"])
    assert out["next_offset"] == 5 + len(out["items"])
    assert f"offset={out['next_offset']}" in out["cut"]["note"]


def test_one_item_larger_than_the_budget_is_cut_to_fit() -> None:
    out = fit_page(page(1, 50_000), "items", 2000, fitting="whole", offset=0, more="")
    assert size(out) <= 2000 and len(out["items"]) == 1


def test_a_tree_is_pruned_to_fit() -> None:
    tree = {"query": "q", "ast": {"a": "b" * 5000},
            "plan": {"children": [{"steps": ["s" * 300] * 50}] * 50}, "cut": None}
    out = fit_tree(tree, 3000, droppable=("ast",), tree="plan", more="ask the CLI")
    assert size(out) <= 3000 and out["ast"] == {} and "ask the CLI" in out["cut"]["note"]


def test_the_cli_states_the_budget_defaults() -> None:
    assert (mcp_cmd.DEFAULT_OUTPUT_CHARS, mcp_cmd.MIN_OUTPUT_CHARS) == \
        (budget.DEFAULT_OUTPUT_CHARS, budget.MIN_OUTPUT_CHARS)


def test_every_field_of_a_warning_kind_passes_through() -> None:
    new_kind = {"kind": "dropped_by_gate", "subject": '"glaciers"', "suggestion": None,
                "message": "3 fragments dropped", "dropped": 3, "best_cosine": 0.81,
                "rule": "MIN_SCORE"}
    assert [w.model_dump() for w in warnings_out([new_kind])] == [new_kind]


def test_nested_lists_are_thinned_before_texts_get_short() -> None:
    data = {"items": [{"id": i, "fragments": [{"text": "y" * 600}] * 3} for i in range(8)],
            "next_offset": None, "cut": None}
    thinned = fit_page(data, "items", 5000, fitting="snippets", offset=0, more="",
                       thin="fragments")
    plain = fit_page(data, "items", 5000, fitting="snippets", offset=0, more="")
    assert size(thinned) <= 5000
    assert all(len(item["fragments"]) == 1 for item in thinned["items"])
    assert (thinned["cut"]["texts_cut_to"] or 10**9) > (plain["cut"]["texts_cut_to"] or 0) \
        or len(thinned["items"]) > len(plain["items"])
