"""Shared output of the benchmarks: every run writes its figures as JSON and says where."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_json(path: str | Path, result: Any) -> None:
    """Write ``result`` as indented JSON to ``path`` (parents created) and print the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {target}")
