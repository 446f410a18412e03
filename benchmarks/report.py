"""Shared output of the benchmarks: every run writes its figures as JSON and says where."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


def write_json(path: str | Path, result: Any) -> None:
    """Write ``result`` as indented JSON to ``path`` (parents created) and print the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {target}")


def finish(result: dict[str, Any], table: Callable[[dict[str, Any]], str], *,
           data: str | Path, split: str, json_path: str | Path) -> int:
    """The end of a corpus benchmark's ``main``: label the result with the corpus and split it
    ran on, print its table, write its JSON; returns the exit status (0)."""
    result.update(data=str(data), split=split)
    print(table(result))
    write_json(json_path, result)
    return 0
