"""Every ```python block of README.md runs as written against the test server.

Blocks are found by a small extractor (a line that is exactly ```python opens one, a line that
is exactly ``` closes it), so a block added anywhere in the README is picked up. Each block runs
on its own: the data is wiped first, ``NEO4J_URI`` names the session's server, and
``THALABUS_RERANKER_URL`` a loopback vLLM /score server (the one the rerank tests use), so a
block that leans on a name or data of another block fails. Line numbers in a failure's
traceback are README.md's. A block that must not run (there should be none) opens with
```python no-run; the test reports how many it skipped that way.

The only thing swapped in is where embeddings come from: the engine's default embedder is the
same local e5 model, memoised per process (``tests.integration.sample``), so blocks that ingest
the sample corpus do not each re-embed it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.integration.sample import shared_embedder
from tests.support.loopback import LoopbackServer, score_handler
from thalabus_graph.graph.database import Database

pytestmark = pytest.mark.integration

README = Path(__file__).resolve().parents[2] / "README.md"
OPEN = re.compile(r"```python(?:[ \t]+(?P<flag>\S+))?[ \t]*")
NO_RUN = "no-run"


@dataclass(frozen=True)
class Block:
    """One ```python block: the README line of its first code line, its code, its flag."""

    line: int
    code: str
    flag: str | None = None


def python_blocks(text: str) -> list[Block]:
    """The ```python blocks of a Markdown text, in order; an unclosed block is an error."""
    blocks: list[Block] = []
    lines = text.splitlines()
    number = 0
    while number < len(lines):
        opening = OPEN.fullmatch(lines[number].strip())
        number += 1
        if opening is None:
            continue
        start = number
        while number < len(lines) and lines[number].strip() != "```":
            number += 1
        if number == len(lines):
            raise ValueError(f"README.md:{start}: ```python block is never closed")
        blocks.append(Block(start + 1, "\n".join(lines[start:number]), opening["flag"]))
        number += 1
    return blocks


BLOCKS = python_blocks(README.read_text(encoding="utf-8"))


def test_the_extractor_finds_blocks_flags_and_line_numbers() -> None:
    text = "intro\n```python\na = 1\n```\n```bash\nls\n```\n```python no-run\nb\n```\n"
    assert python_blocks(text) == [Block(3, "a = 1"), Block(9, "b", NO_RUN)]
    with pytest.raises(ValueError, match=r"README\.md:2"):
        python_blocks("x\n```python\nopen")
    assert len(BLOCKS) >= 3 and all(b.flag in (None, NO_RUN) for b in BLOCKS)
    print(f"{len(BLOCKS)} python blocks, {sum(b.flag == NO_RUN for b in BLOCKS)} marked no-run")


@pytest.fixture(scope="module")
def score_server() -> Iterator[LoopbackServer]:
    with LoopbackServer(score_handler("vllm-score")) as server:
        yield server


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.flag != NO_RUN],
                         ids=lambda b: f"README.md:{b.line}")
def test_readme_block_runs(block: Block, clean_db: Database, neo4j_uri: str,
                           score_server: LoopbackServer, monkeypatch: pytest.MonkeyPatch,
                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("NEO4J_URI", neo4j_uri)
    monkeypatch.setenv("THALABUS_RERANKER_URL", score_server.url)
    monkeypatch.setenv("THALABUS_RERANKER_PROTOCOL", "vllm-score")
    monkeypatch.setattr("thalabus_graph.engine.embedder_from_settings",
                        lambda *_args, **_kwargs: shared_embedder())
    monkeypatch.chdir(README.parent)
    # padding keeps the traceback's line numbers equal to README.md's
    code = compile("\n" * (block.line - 1) + block.code, str(README), "exec")
    namespace: dict[str, Any] = {"__name__": "__readme__"}
    try:
        exec(code, namespace)
    except Exception as exc:
        pytest.fail(f"README.md:{block.line}: the block raised {exc!r}\n{block.code}")
    finally:
        clean_db.write("migrations_delete_data_nodes")
    assert capsys.readouterr().out.strip(), f"README.md:{block.line} printed nothing"
