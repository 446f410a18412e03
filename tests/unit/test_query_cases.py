"""The language specification as data: every case of ``tests/query_cases.json``.

A case is ``{"query", "ast", "canonical"}`` (parses to that AST, serializes to that text) or
``{"query", "error": {"position", "message"}}`` (raises at that offset, message containing it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from thalabus_graph.errors import ThalabusSyntaxError
from thalabus_graph.query import from_dict, parse, serialize

CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).resolve().parents[1] / "query_cases.json").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("case", CASES, ids=[repr(case["query"]) for case in CASES])
def test_case(case: dict[str, Any]) -> None:
    text: str = case["query"]
    if "error" in case:
        with pytest.raises(ThalabusSyntaxError) as info:
            parse(text)
        assert info.value.position == case["error"]["position"], str(info.value)
        assert case["error"]["message"] in str(info.value)
        assert info.value.text == text
        return
    node = parse(text)
    assert node.to_dict() == case["ast"]
    assert from_dict(case["ast"]) == node
    assert serialize(node) == case["canonical"]
    assert parse(case["canonical"]) == node


def test_the_case_file_covers_both_kinds() -> None:
    assert sum("error" in case for case in CASES) >= 50
    assert sum("ast" in case for case in CASES) >= 50
