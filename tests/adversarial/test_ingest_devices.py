"""A device given as the file of documents (``/dev/zero``, ``/dev/urandom``) is refused with
an ``IngestError`` before a line is read: it never ends, so an ingest would skip one endless
over-long line forever. Pipes (``/dev/stdin`` fed by a pipe, ``<(...)``) are still read."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from thalabus_graph.cli import main
from thalabus_graph.errors import IngestError
from thalabus_graph.ingest.lines import iter_documents
from thalabus_graph.ingest.source import SourceDocument

DEVICES = ["/dev/zero", "/dev/urandom"]


@pytest.mark.parametrize("device", DEVICES)
def test_iterating_a_device_is_refused_before_a_line(device: str) -> None:
    with pytest.raises(IngestError, match="is a device, not a file of documents"):
        next(iter_documents(device, max_line_bytes=1024))


@pytest.mark.parametrize("device", DEVICES)
def test_the_cli_refuses_a_device_as_bad_input_before_connecting(
        device: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", device, "--uri", "bolt://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {device} is a device"), err


@pytest.fixture
def pipe() -> Iterator[str]:
    """A pipe holding one document line, named by its /dev/fd path."""
    read_end, write_end = os.pipe()
    os.write(write_end, b'{"documentid": "piped-1"}\n')
    os.close(write_end)
    try:
        yield f"/dev/fd/{read_end}"
    finally:
        os.close(read_end)


def test_a_pipe_is_still_read(pipe: str) -> None:
    parsed = list(iter_documents(pipe))
    assert [d.documentid for d in parsed if isinstance(d, SourceDocument)] == ["piped-1"]
