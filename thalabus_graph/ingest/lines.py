"""The ingest input's lines, read within a byte bound: no line is ever held whole past it.

One job: turn a file (or any iterable of lines) into parsed lines, one
:class:`SourceDocument` or :class:`LineError` per non-blank line, lazily, reading at most
``max_line_bytes`` + 1 bytes of a line at a time and skipping an over-long one in chunks; and
count a file's documents up front, in chunks too, for the progress total. A device that never
ends (``/dev/zero``) is refused before a byte is read.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterable, Iterator, Sized
from typing import IO

from thalabus_graph.errors import IngestError
from thalabus_graph.ingest.parsing import parse_document
from thalabus_graph.ingest.source import LineError, ParsedLine, SourceDocument

logger = logging.getLogger(__name__)

LINE_BYTES_PER_PASSAGE_CHAR = 8
"""``line_limit``: bytes of an input line allowed per character of ``max_passage_chars``."""
SKIP_CHUNK_BYTES = 1 << 20
"""How much of an over-long line is read at a time while skipping to its end."""
COUNT_CHUNK_BYTES = 1 << 20
"""How much of an input file is read at a time while counting its lines for the progress."""


def line_limit(max_passage_chars: int) -> int:
    """The longest input line read, in bytes, for a ``max_passage_chars`` setting.

    Example:
        >>> line_limit(16_000_000)
        128000000
    """
    return LINE_BYTES_PER_PASSAGE_CHAR * max_passage_chars


def iter_documents(
    source: str | os.PathLike[str] | Iterable[str | bytes],
    *,
    max_line_bytes: int | None = None,
) -> Iterator[ParsedLine]:
    """Yield a :class:`SourceDocument` or :class:`LineError` per non-blank line, lazily.

    Args:
        source: a path to a ``.jsonl`` file, or any iterable of lines (str or bytes),
            such as an open file. Nothing is read before the iterator is advanced.
        max_line_bytes: a longer line is a :class:`LineError`; a file is never read more
            than this + 1 bytes of a line at a time. None: ``line_limit`` of the default
            ``max_passage_chars``.
    """
    limit = max_line_bytes if max_line_bytes is not None else _default_line_limit()
    if isinstance(source, str | os.PathLike):
        yield from _iter_path(source, limit)
        return
    for number, line in enumerate(source, start=1):
        parsed = (_over_long(number, limit) if _line_bytes_over(line, limit)
                  else _parse_line(line, number))
        if parsed is not None:
            yield parsed


def read_documents(
    source: str | os.PathLike[str] | Iterable[str | bytes],
    *,
    skip_errors: bool = False,
    errors: list[LineError] | None = None,
) -> Iterator[SourceDocument]:
    """Yield the valid documents; a bad line raises :class:`IngestError`, or is skipped.

    Args:
        source: as for :func:`iter_documents`.
        skip_errors: skip bad lines instead of raising at the first one.
        errors: when given, skipped lines are appended to it.
    """
    for parsed in iter_documents(source):
        if isinstance(parsed, LineError):
            if not skip_errors:
                raise parsed.to_exception()
            if errors is not None:
                errors.append(parsed)
            continue
        yield parsed


def _default_line_limit() -> int:
    from thalabus_graph.settings import Settings

    return line_limit(Settings.max_passage_chars)


def check_source_kind(path: str | os.PathLike[str], mode: int, fd: int) -> None:
    """Refuse a device as a file of documents (``IngestError``): ``/dev/zero`` or
    ``/dev/urandom`` never ends, so an ingest of it would skip one endless over-long line
    forever. A regular file, a pipe (``<(...)``, ``/dev/stdin`` fed by a pipe) and a terminal
    are read."""
    if (stat.S_ISCHR(mode) and not os.isatty(fd)) or stat.S_ISBLK(mode) \
            or stat.S_ISSOCK(mode):
        raise IngestError(f"{os.fspath(path)} is a device, not a file of documents: give a "
                          "JSON Lines file, or pipe the lines in (ingest /dev/stdin)")


def _iter_path(path: str | os.PathLike[str], limit: int) -> Iterator[ParsedLine]:
    with open(path, "rb") as handle:
        check_source_kind(path, os.fstat(handle.fileno()).st_mode, handle.fileno())
        for number, raw in enumerate(bounded_lines(handle, limit), start=1):
            parsed = _over_long(number, limit) if raw is None else _parse_line(raw, number)
            if parsed is not None:
                yield parsed


def bounded_lines(handle: IO[bytes], limit: int) -> Iterator[bytes | None]:
    """Each line of ``handle`` (its newline kept), or None for a line of more than ``limit``
    bytes: None comes as soon as the line is known to be too long (so the caller can say so
    before a long skip), and the rest of the line is then read past in ``SKIP_CHUNK_BYTES``
    chunks up to its newline, never held; no read takes more than ``limit + 1`` bytes."""
    while line := handle.readline(limit + 1):
        if line.endswith(b"\n") or len(line) <= limit:
            yield line
            continue
        del line
        yield None
        while (rest := handle.readline(SKIP_CHUNK_BYTES)) and not rest.endswith(b"\n"):
            pass


def _line_bytes_over(line: str | bytes, limit: int) -> bool:
    """Whether a line given in memory is longer than ``limit`` bytes (newline aside)."""
    if isinstance(line, str):
        if len(line) * 4 <= limit:
            return False
        line = line.encode("utf-8", "surrogatepass")
    ending = 2 if line.endswith(b"\r\n") else 1 if line.endswith(b"\n") else 0
    return len(line) - ending > limit


def _over_long(number: int, limit: int) -> LineError:
    message = (f"the line is longer than {limit:,} bytes (8 x max_passage_chars); it is "
               "skipped without being read into memory")
    logger.warning("line %d: %s", number, message)
    return LineError(number, message)


def _parse_line(line: str | bytes, number: int) -> ParsedLine | None:
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            return LineError(number, f"not valid UTF-8: {exc}")
    if number == 1:
        line = line.removeprefix("\ufeff")
    if not line.strip():
        return None
    try:
        return parse_document(line, number)
    except IngestError as exc:
        return LineError(number, _strip_prefix(str(exc), number))


def _strip_prefix(message: str, number: int) -> str:
    return message.removeprefix(f"line {number}: ")


def count_documents(source: object) -> int | None:
    """How many documents ``source`` holds, counted before the run: the non-blank lines of a
    regular file (one pass over its bytes, ``COUNT_CHUNK_BYTES`` at a time, however long a
    line), ``len`` of a sized iterable, else None (no ETA; a pipe or device is not read
    twice)."""
    if isinstance(source, str | os.PathLike):
        try:
            if not stat.S_ISREG(os.stat(source).st_mode):
                return None
            with open(source, "rb") as handle:
                return count_lines(handle)
        except OSError:
            return None  # the run itself reports the unreadable file
    return len(source) if isinstance(source, Sized) else None


def count_lines(handle: IO[bytes]) -> int:
    """The lines of ``handle`` holding anything but whitespace, read in chunks."""
    count, pending = 0, False   # pending: the unfinished last line has content
    while chunk := handle.read(COUNT_CHUNK_BYTES):
        pieces = chunk.split(b"\n")
        for piece in pieces[:-1]:
            count += pending or bool(piece.strip())
            pending = False
        pending = pending or bool(pieces[-1].strip())
    return count + pending


__all__ = [
    "COUNT_CHUNK_BYTES",
    "LINE_BYTES_PER_PASSAGE_CHAR",
    "SKIP_CHUNK_BYTES",
    "bounded_lines",
    "check_source_kind",
    "count_documents",
    "count_lines",
    "iter_documents",
    "line_limit",
    "read_documents",
]
