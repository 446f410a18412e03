"""Progress of long work: the line format, and the log lines written when not on a terminal
(also when the application configured no logging)."""

from __future__ import annotations

import io
import logging
import re
import subprocess
import sys
import time

import pytest

from thalabus_graph.progress import Progress, duration, progress_line


def test_lines_say_count_total_rate_and_eta() -> None:
    assert progress_line("ingest", 1200, 5000, "documents", 3.87) == (
        "ingest: 1,200/5,000 documents, 310 doc/s, ETA 12 s")
    assert progress_line("ingest", 0, 5000, "documents", 0.4) == (
        "ingest: 0/5,000 documents, ? doc/s, ETA ?")
    assert progress_line("ingest", 12, None, "documents", 4.0) == (
        "ingest: 12 documents, 3.0 doc/s")
    assert progress_line("ingest", 31, 31, "documents", 9.6, done_in=9.6) == (
        "ingest: 31/31 documents, 3.2 doc/s, done in 10 s")
    assert progress_line("warm-up", 16, 64, "queries", 8.0, rate_unit="query") == (
        "warm-up: 16/64 queries, 2.0 query/s, ETA 24 s")
    assert [duration(s) for s in (0.4, 59.4, 61, 3725)] == ["0 s", "59 s", "1 min 01 s",
                                                            "1 h 02 min"]


def test_not_on_a_terminal_it_logs_a_line_every_interval_and_one_at_the_end(
        caplog: pytest.LogCaptureFixture) -> None:
    now = [100.0]
    caplog.set_level(logging.INFO, logger="thalabus_graph.progress")
    with Progress(5000, terminal=False, interval=0.05, clock=lambda: now[0]) as progress:
        progress.advance(1000)
        progress.partial(200.4)           # a batch in flight, its embeddings part done
        now[0] = 103.87
        deadline = time.monotonic() + 5
        while len(caplog.records) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        now[0] = 110.0
        progress.advance(3000)
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0] == "ingest: 0/5,000 documents, ? doc/s, ETA ?"
    assert lines[1] == "ingest: 1,200/5,000 documents, 310 doc/s, ETA 12 s"
    assert set(lines[1:-1]) <= {lines[1], "ingest: 4,000/5,000 documents, 400 doc/s, ETA 2 s"}
    assert lines[-1] == "ingest: 4,000/5,000 documents, 400 doc/s, done in 10 s"


def test_on_a_terminal_the_bar_has_the_total_and_an_eta_once_anything_is_done() -> None:
    stream = io.StringIO()
    with Progress(31, terminal=True, stream=stream) as progress:
        progress.partial(0.5)
        sliver = stream.getvalue()
        time.sleep(0.3)
        progress.partial(1.5)
        progress.advance(31)
    frames = stream.getvalue().split("\r")
    assert re.search(r" 0/31 documents \[00:00<\?", frames[1])
    assert not re.search(r"/31 documents \[\d\d:\d\d<\d", sliver), sliver
    assert any(re.search(r" 2/31 documents \[00:00<\d\d:\d\d", f) for f in frames)
    assert "31/31 documents" in frames[-1]


def test_the_bar_counts_its_own_unit() -> None:
    stream = io.StringIO()
    with Progress(4, label="warm-up", unit="queries", rate_unit="query", terminal=True,
                  stream=stream) as progress:
        time.sleep(0.3)
        progress.advance(4)
    frames = stream.getvalue().split("\r")
    assert frames[-1].startswith("warm-up: 100%")
    assert re.search(r" 4/4 queries \[\d\d:\d\d<00:00, [\d.]+ ?query/s\]", frames[-1]), frames[-1]


def test_no_rate_or_eta_before_one_whole_unit_is_done() -> None:
    assert progress_line("ingest", 0.04, 30, "documents", 2.0) == (
        "ingest: 0/30 documents, ? doc/s, ETA ?")
    assert progress_line("ingest", 0.99, 30, "documents", 2.0) == (
        "ingest: 0/30 documents, ? doc/s, ETA ?")
    assert progress_line("ingest", 1, 30, "documents", 2.0) == (
        "ingest: 1/30 documents, 0.5 doc/s, ETA 58 s")


def test_time_paused_is_left_out_of_the_rate(caplog: pytest.LogCaptureFixture) -> None:
    now = [100.0]
    caplog.set_level(logging.INFO, logger="thalabus_graph.progress")
    with Progress(20, terminal=False, interval=3600, clock=lambda: now[0]) as progress:
        with progress.paused():
            now[0] = 160.0               # a model loading for a minute
        now[0] = 170.0
        progress.advance(10)
        assert progress.line() == "ingest: 10/20 documents, 1.0 doc/s, ETA 10 s"


def _stderr_of(script: str) -> str:
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, check=True)
    return done.stderr


PROGRESS_SCRIPT = """
from thalabus_graph.progress import Progress
with Progress(3, terminal=False) as progress:
    progress.advance(3)
"""


def test_without_logging_configured_the_lines_reach_stderr() -> None:
    lines = _stderr_of(PROGRESS_SCRIPT).splitlines()
    assert lines[0] == "INFO thalabus_graph.progress: ingest: 0/3 documents, ? doc/s, ETA ?"
    assert re.fullmatch(r"INFO thalabus_graph\.progress: ingest: 3/3 documents, [\d.,]+ doc/s, "
                        r"done in \d+ s", lines[-1]), lines


def test_logging_the_application_configured_decides() -> None:
    quiet = "import logging; logging.basicConfig(level=logging.WARNING)\n" + PROGRESS_SCRIPT
    assert _stderr_of(quiet) == ""
    muted = ("import logging; logging.getLogger('thalabus_graph').setLevel(logging.WARNING)\n"
             + PROGRESS_SCRIPT)
    assert _stderr_of(muted) == ""
    verbose = "import logging; logging.basicConfig(level=logging.INFO)\n" + PROGRESS_SCRIPT
    assert "INFO:thalabus_graph.progress:ingest: 0/3 documents" in _stderr_of(verbose)
