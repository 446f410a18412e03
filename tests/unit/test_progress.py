"""Progress of long work: the line format, and the log lines written when not on a terminal."""

from __future__ import annotations

import io
import logging
import re
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
        while not caplog.records and time.monotonic() < deadline:
            time.sleep(0.01)
        now[0] = 110.0
        progress.advance(3000)
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0] == "ingest: 1,200/5,000 documents, 310 doc/s, ETA 12 s"
    assert set(lines[:-1]) <= {lines[0], "ingest: 4,000/5,000 documents, 400 doc/s, ETA 2 s"}
    assert lines[-1] == "ingest: 4,000/5,000 documents, 400 doc/s, done in 10 s"


def test_on_a_terminal_the_bar_has_the_total_and_an_eta_once_anything_is_done() -> None:
    stream = io.StringIO()
    with Progress(31, terminal=True, stream=stream) as progress:
        progress.partial(0.5)
        time.sleep(0.3)
        progress.advance(31)
    frames = stream.getvalue().split("\r")
    assert re.search(r" 0/31 documents \[00:00<\?", frames[1])
    assert any(re.search(r" [01]/31 documents \[00:00<\d\d:\d\d", f) for f in frames)
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
