"""Every ```python and ```bash block of README.md and docs/*.md runs as written against the
test server.

Blocks are found by a small extractor (a line that is exactly ```LANG [FLAG] opens one, a line
that is exactly ``` closes it), so a block added anywhere is picked up. A fenced block must say
its language: ``python`` and ``bash`` blocks run, ``text`` blocks are displays (a JSON shape,
output) and do not. Each block runs on its own: the data is wiped first, ``NEO4J_URI`` names the
session's server, and ``THALABUS_RERANKER_URL`` a loopback vLLM /score server (the one the rerank
tests use), so a block that leans on a name of another block fails. Flags:

- ``sample``: the block reads the sample corpus the page loaded earlier, so it is loaded first;
- ``no-run``: the block cannot run here (installing from PyPI, starting a second Neo4j,
  connecting to Aura, the long ``make`` targets); the test reports how many it left out.

Python blocks run in this process; line numbers in a failure's traceback are the page's. The
only thing swapped in is where embeddings come from: the engine's default embedder is the same
local e5 model, memoised per process (``tests.integration.sample``), so blocks that ingest the
sample corpus do not each re-embed it. Bash blocks run in ``bash -euo pipefail`` with this
virtualenv's ``bin`` first on ``PATH`` (``python`` and ``thalabus-graph`` are the installed
ones), in a temporary directory; they embed with the installed model, as a user's shell does.
Every block must print something.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.integration.sample import load_sample, shared_embedder
from tests.support.loopback import LoopbackServer, score_handler
from thalabus_graph.graph.connection import Connection
from thalabus_graph.graph.database import Database

pytestmark = [pytest.mark.integration, pytest.mark.line_neutral]

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
OPEN = re.compile(r"```(?P<lang>[\w-]*)(?:[ \t]+(?P<flag>\S+))?[ \t]*")
NO_RUN, SAMPLE = "no-run", "sample"
RUN = ("python", "bash")
LANGUAGES = (*RUN, "text")


@dataclass(frozen=True)
class Block:
    """One fenced block: its page, the line of its first code line, its language, its code and
    its flag."""

    page: str
    line: int
    lang: str
    code: str
    flag: str | None = None

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def fenced_blocks(text: str, page: str = "README.md") -> list[Block]:
    """The fenced blocks of a Markdown text, in order; an unclosed block is an error."""
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
            raise ValueError(f"{page}:{start}: ```{opening['lang']} block is never closed")
        blocks.append(Block(page, start + 1, opening["lang"], "\n".join(lines[start:number]),
                            opening["flag"]))
        number += 1
    return blocks


BLOCKS = [block for page in PAGES
          for block in fenced_blocks(page.read_text(encoding="utf-8"),
                                     str(page.relative_to(ROOT)))]
RUNNABLE = [b for b in BLOCKS if b.lang in RUN and b.flag != NO_RUN]


def test_the_extractor_finds_blocks_languages_flags_and_line_numbers() -> None:
    text = "intro\n```python\na = 1\n```\n```bash\nls\n```\n```python no-run\nb\n```\n"
    assert fenced_blocks(text) == [Block("README.md", 3, "python", "a = 1"),
                                   Block("README.md", 6, "bash", "ls"),
                                   Block("README.md", 9, "python", "b", NO_RUN)]
    with pytest.raises(ValueError, match=r"README\.md:2"):
        fenced_blocks("x\n```python\nopen")


def test_every_block_says_its_language_and_code_runs_unless_marked() -> None:
    bad = [f"{b}: ```{b.lang} {b.flag or ''}" for b in BLOCKS
           if b.lang not in LANGUAGES or b.flag not in (None, NO_RUN, SAMPLE)
           or (b.lang == "text" and b.flag is not None)]
    assert not bad, "blocks without a known language or flag: " + ", ".join(bad)
    readme = [b for b in RUNNABLE if b.page == "README.md"]
    assert {b.lang for b in readme} == set(RUN) and len(readme) >= 6
    left_out = [str(b) for b in BLOCKS if b.flag == NO_RUN]
    print(f"{len(RUNNABLE)} blocks run, {len(left_out)} marked no-run: {', '.join(left_out)}")


@pytest.fixture(scope="module")
def score_server() -> Iterator[LoopbackServer]:
    with LoopbackServer(score_handler("vllm-score")) as server:
        yield server


@pytest.mark.parametrize("block", RUNNABLE, ids=str)
def test_block_runs(block: Block, clean_db: Database, neo4j_connection: Connection,
                    score_server: LoopbackServer, monkeypatch: pytest.MonkeyPatch,
                    capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    env = {"NEO4J_URI": neo4j_connection.uri, "THALABUS_RERANKER_URL": score_server.url,
           "THALABUS_RERANKER_PROTOCOL": "vllm-score"}
    if neo4j_connection.auth is not None:
        env.update(NEO4J_USERNAME=neo4j_connection.auth[0],
                   NEO4J_PASSWORD=neo4j_connection.auth[1])
    try:
        if block.flag == SAMPLE:
            load_sample(clean_db)
        if block.lang == "python":
            _run_python(block, env, monkeypatch, capsys)
        else:
            _run_bash(block, env, tmp_path)
    finally:
        clean_db.write("migrations_delete_data_nodes")


def _run_python(block: Block, env: dict[str, str], monkeypatch: pytest.MonkeyPatch,
                capsys: pytest.CaptureFixture[str]) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr("thalabus_graph.engine.embedder_from_settings",
                        lambda *_args, **_kwargs: shared_embedder())
    monkeypatch.chdir(ROOT)
    # padding keeps the traceback's line numbers equal to the page's
    code = compile("\n" * (block.line - 1) + block.code, str(ROOT / block.page), "exec")
    namespace: dict[str, Any] = {"__name__": "__readme__"}
    try:
        exec(code, namespace)
    except Exception as exc:
        pytest.fail(f"{block}: the block raised {exc!r}\n{block.code}")
    assert capsys.readouterr().out.strip(), f"{block} printed nothing"


def _run_bash(block: Block, env: dict[str, str], workdir: Path) -> None:
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", block.code], cwd=workdir,
                          env={**os.environ, **env, "PATH": path}, capture_output=True,
                          text=True, timeout=900, check=False)
    assert done.returncode == 0, (f"{block}: exit {done.returncode}\n{block.code}\n"
                                  f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}")
    assert done.stdout.strip(), f"{block} printed nothing"
