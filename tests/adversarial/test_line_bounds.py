"""Over-long input lines: never held whole, reported by number, and reading goes on.

A line is read at most ``max_line_bytes`` + 1 bytes at a time; a longer one is a line error
and is read past in chunks up to its newline. The tests count the bytes the reader hands out
and the memory Python allocates, not time.
"""

from __future__ import annotations

import io
import json
import tracemalloc
from pathlib import Path

import pytest

from tests.adversarial.conftest import HashEmbedder
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.errors import IngestError
from thalabus_graph.graph.database import Database
from thalabus_graph.ingest.lines import (
    SKIP_CHUNK_BYTES,
    bounded_lines,
    count_documents,
    count_lines,
    iter_documents,
    line_limit,
)
from thalabus_graph.ingest.source import LineError, SourceDocument

LIMIT = 4096
LONG = 32 * 1024 * 1024


class ZerosThenLines(io.RawIOBase):
    """``zeros`` zero bytes, then ``tail``: a huge first line made on the fly, never held.

    ``largest`` is the most bytes one read handed out.
    """

    def __init__(self, zeros: int, tail: bytes) -> None:
        self.zeros, self.tail, self.position, self.largest = zeros, tail, 0, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        size = len(buffer)
        if self.position < self.zeros:
            n = min(size, self.zeros - self.position)
            buffer[:n] = bytes(n)
        else:
            start = self.position - self.zeros
            piece = self.tail[start:start + size]
            n = len(piece)
            buffer[:n] = piece
        self.position += n
        self.largest = max(self.largest, n)
        return n


def _line(documentid: str) -> bytes:
    return json.dumps({"documentid": documentid, "chapters": ["short"]}).encode() + b"\n"


def test_an_over_long_line_is_skipped_a_chunk_at_a_time() -> None:
    raw = ZerosThenLines(LONG, b"\n" + _line("after"))
    handle = io.BufferedReader(raw, buffer_size=8192)
    lines = list(bounded_lines(handle, LIMIT))
    assert lines == [None, _line("after")]
    assert raw.position == LONG + 1 + len(_line("after"))
    assert raw.largest <= max(LIMIT + 1, SKIP_CHUNK_BYTES)


def test_reading_a_file_with_a_huge_line_holds_a_bounded_amount(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as out:
        out.write(_line("before"))
        out.write(b'{"documentid": "huge", "chapters": ["' + b"x" * LONG + b'"]}\n')
        out.write(_line("after"))
    tracemalloc.start()
    try:
        parsed = list(iter_documents(path, max_line_bytes=LIMIT))
        total = count_documents(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * SKIP_CHUNK_BYTES, peak
    assert total == 3
    assert [p.documentid if isinstance(p, SourceDocument) else p.line_number
            for p in parsed] == ["before", 2, "after"]
    error = parsed[1]
    assert isinstance(error, LineError) and f"longer than {LIMIT:,} bytes" in error.message


def test_a_line_at_the_limit_is_read_and_one_byte_more_is_not() -> None:
    body = json.dumps({"documentid": "edge", "title": ""}).encode()
    fits = body + b" " * (LIMIT - len(body))
    assert len(fits) == LIMIT
    for ending in (b"\n", b""):
        parsed = list(iter_documents(io.BytesIO(fits + ending), max_line_bytes=LIMIT))
        assert [type(p) for p in parsed] == [SourceDocument]
        assert bounded_lines(io.BytesIO(fits + ending), LIMIT).__next__() == fits + ending
    assert list(bounded_lines(io.BytesIO(b" " + fits + b"\n" + _line("next")), LIMIT)) == [
        None, _line("next")]
    over = list(iter_documents([(b" " + fits).decode()], max_line_bytes=LIMIT))
    assert isinstance(over[0], LineError)


def test_counting_lines_for_the_progress_reads_in_chunks() -> None:
    content = b"  \n" + _line("a") + b"\t\r\n" + b"x" * (3 * SKIP_CHUNK_BYTES) + b"\n\n" + b" y"
    assert count_lines(io.BytesIO(content)) == 3
    assert count_lines(io.BytesIO(b"")) == 0


def test_a_pipe_or_device_is_not_counted() -> None:
    assert count_documents("/dev/zero") is None


def test_the_line_limit_follows_the_passage_limit() -> None:
    assert line_limit(Settings().max_passage_chars) == 8 * Settings().max_passage_chars


@pytest.mark.integration
def test_ingest_reports_the_over_long_line_and_goes_on(clean_db: Database,
                                                       tmp_path: Path) -> None:
    settings = Settings.from_env(max_passage_chars=200)
    graph = ThalabusGraph(clean_db, settings=settings,
                          embedder=HashEmbedder(settings.embedding_dimensions))
    path = tmp_path / "long.jsonl"
    long_line = json.dumps({"documentid": "long", "chapters": ["y" * 5000]}).encode() + b"\n"
    path.write_bytes(_line("before") + long_line + _line("after"))
    report = graph.ingest(path, progress=False)
    assert [e.line_number for e in report.errors] == [2]
    assert "longer than 1,600 bytes" in report.errors[0].message
    assert report.documents == 2
    with pytest.raises(IngestError) as caught:
        graph.ingest(path, strict=True, progress=False)
    assert caught.value.line_number == 2
