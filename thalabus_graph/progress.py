"""Progress of long work (ingest, the search warm-up): a total, a rate and an ETA, refreshed
while nothing finishes.

On a terminal it is a tqdm bar that a ticker thread redraws every ``REFRESH_SECONDS``, so the
elapsed time and the ETA move even while one large batch is being embedded. Elsewhere (a pipe,
a log file, CI) it is a log line on the ``thalabus_graph.progress`` logger at the start, every
``LOG_INTERVAL_SECONDS`` and at the end::

    ingest: 1,200/5,000 documents, 310 doc/s, ETA 12 s

Those lines reach stderr even when the application configured no logging at all (``notice``):
a library call that runs for minutes should not be silent. An application that configured
logging decides for itself (the lines are INFO records like any other).

Work may advance in fractions of a unit (a batch's documents as its embeddings are computed),
so the first ETA comes long before the first batch is written; but only once a whole unit's
worth is done, the rate is measured: before that, the rate and the ETA read ``?``.
"""

from __future__ import annotations

import logging
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

REFRESH_SECONDS = 0.5
"""How often the terminal bar is redrawn."""
LOG_INTERVAL_SECONDS = 5.0
"""How often a progress log line is written when the output is not a terminal."""
logger = logging.getLogger(__name__)


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is when a record arrives."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


_UNCONFIGURED = _StderrHandler()
_UNCONFIGURED.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))


def logging_unconfigured() -> bool:
    """True when the application set up no logging for these lines: no handler on the way
    to the root logger (the package's own ``NullHandler`` aside) and no level set on
    ``thalabus_graph`` or below."""
    root = logging.getLogger()
    node: logging.Logger | None = logger
    while node is not None:
        if any(not isinstance(h, logging.NullHandler) for h in node.handlers):
            return False
        if node is not root and node.level != logging.NOTSET:
            return False
        if not node.propagate:
            return True
        node = node.parent
    return True


def notice(message: str) -> None:
    """An INFO line on the ``thalabus_graph.progress`` logger; when the application configured
    no logging (``logging_unconfigured``), written to stderr as the CLI writes it, since
    Python would drop an INFO record then and a long call would look hung.

    Example:
        >>> notice("migrate: 3/11 migrations, 0.5 migrations/s, ETA 16 s")  # doctest: +SKIP
    """
    if logging_unconfigured():
        _UNCONFIGURED.handle(logger.makeRecord(logger.name, logging.INFO, __file__, 0,
                                               message, (), None))
    else:
        logger.info("%s", message)


def bar_format(unit: str, *, total_known: bool) -> str:
    """The terminal bar's tqdm format: whole units (work advances in fractions), the total,
    elapsed time, ETA and rate; without a total, no percentage and no ETA.

    Example:
        >>> bar_format("queries", total_known=False)
        '{desc}: {n:,.0f} queries [{elapsed}, {rate_fmt}]'
    """
    if not total_known:
        return "{desc}: {n:,.0f} " + unit + " [{elapsed}, {rate_fmt}]"
    return ("{desc}: {percentage:3.0f}%|{bar}| {n:,.0f}/{total:,} " + unit
            + " [{elapsed}<{remaining}, {rate_fmt}]")


def rate_unit_of(unit: str) -> str:
    """The short unit of a rate: ``doc`` for ``documents`` (``doc/s``), else the unit."""
    return unit[:3] if unit == "documents" else unit


def duration(seconds: float) -> str:
    """``12 s``, ``3 min 05 s``, ``2 h 04 min``: a remaining or elapsed time for a person."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def progress_line(label: str, done: float, total: int | None, unit: str,
                  seconds: float, *, done_in: float | None = None,
                  rate_unit: str | None = None) -> str:
    """One progress line: ``ingest: 1,200/5,000 documents, 310 doc/s, ETA 12 s``.

    Without a total there is no ETA; before one whole unit is done the rate and ETA say ``?``
    (a rate from a sliver of a unit is noise: a first ETA of hours for a minute's work);
    ``done_in`` (the last line) replaces the ETA by ``done in ...``; ``rate_unit``: the unit
    of the rate (default ``rate_unit_of(unit)``).

    Example:
        >>> progress_line("ingest", 1200, 5000, "documents", 3.87)
        'ingest: 1,200/5,000 documents, 310 doc/s, ETA 12 s'
        >>> progress_line("warm-up", 16, 64, "queries", 8.0, rate_unit="query")
        'warm-up: 16/64 queries, 2.0 query/s, ETA 24 s'
        >>> progress_line("ingest", 0.01, 30, "documents", 1.0)
        'ingest: 0/30 documents, ? doc/s, ETA ?'
    """
    count = f"{int(done):,}" + (f"/{total:,}" if total is not None else "")
    rate = done / seconds if seconds > 0 else 0.0
    short = rate_unit or rate_unit_of(unit)
    if done < 1 or rate <= 0:
        speed, eta = f"? {short}/s", "ETA ?"
    else:
        speed = f"{rate:,.0f} {short}/s" if rate >= 10 else f"{rate:.1f} {short}/s"
        eta = f"ETA {duration((total - done) / rate)}" if total is not None else ""
    if done_in is not None:
        eta = f"done in {duration(done_in)}"
    return ", ".join(part for part in (f"{label}: {count} {unit}", speed, eta) if part)


class Progress:
    """Work done against a total, shown as a bar on a terminal or as periodic log lines.

    Use as a context manager; `advance` adds finished units, `partial` says how far into the
    units in flight the work is (fractions of a batch), `paused` leaves a block's time out of
    the rate (a model loading), `say` writes a line beside the progress.

    Example:
        >>> with Progress(5, label="ingest", terminal=False) as p:  # doctest: +SKIP
        ...     p.advance(2)

    Args:
        total: the units to do (None: unknown, no ETA).
        terminal: draw a tqdm bar on ``stream`` (else log lines).
        interval: seconds between log lines.
        clock: the time source (a test may pass its own).
    """

    def __init__(self, total: int | None, *, label: str = "ingest", unit: str = "documents",
                 rate_unit: str | None = None, terminal: bool, stream: IO[str] | None = None,
                 interval: float = LOG_INTERVAL_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total, self.label, self.unit = total, label, unit
        self.rate_unit = rate_unit or rate_unit_of(unit)
        self.interval, self.clock = interval, clock
        self.done = 0.0
        self.in_flight = 0.0
        self._start = clock()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._paused = False
        self._bar: Any = None
        if terminal:
            from tqdm import tqdm

            # a terminal that reports no size (a fresh pty) still gets a bar: tqdm would read
            # its size as 0 columns and -1 rows and draw nothing
            size = shutil.get_terminal_size((100, 24))
            self._bar = tqdm(total=total, unit=self.rate_unit, desc=label,
                             file=stream or sys.stderr, smoothing=0, mininterval=0.2,
                             ncols=min(max(size.columns, 40), 120), nrows=max(size.lines, 2),
                             bar_format=bar_format(unit, total_known=total is not None))
        else:
            notice(self.line())
        self._ticker = threading.Thread(target=self._tick, name="thalabus-progress",
                                        daemon=True)
        self._ticker.start()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def shown(self) -> float:
        """The units shown as done: the finished ones and the finished part of those in
        flight."""
        return self.done + self.in_flight

    def advance(self, units: int) -> None:
        """``units`` more are finished (the fraction in flight is cleared)."""
        with self._lock:
            self.done += units
            self.in_flight = 0.0
        self._redraw()

    def partial(self, units: float) -> None:
        """Of the units in flight, ``units`` are as good as done."""
        with self._lock:
            self.in_flight = max(0.0, units)
        self._redraw()

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Leave the block's time out of the elapsed time and so of the rate and the ETA
        (loading a model when the first document needs it); a terminal bar is cleared
        meanwhile, so what the block logs gets lines of its own."""
        began = self.clock()
        with self._lock:
            self._paused = True
            if self._bar is not None:
                self._bar.clear()
        try:
            yield
        finally:
            gap = self.clock() - began
            with self._lock:
                self._paused = False
                self._start += gap
                if self._bar is not None:
                    self._bar.start_t += gap
            self._redraw()

    def say(self, text: str) -> None:
        """A line of its own: above the bar on a terminal, else a log line (``notice``)."""
        if self._bar is not None:
            with self._lock:
                self._bar.write(text, file=self._bar.fp)
            return
        notice(text)

    def line(self, *, final: bool = False) -> str:
        """The current progress line (what a log line says); ``final``: the last one, which
        says how long the work took instead of an ETA."""
        elapsed = self.clock() - self._start
        return progress_line(self.label, self.shown, self.total, self.unit, elapsed,
                             done_in=elapsed if final else None, rate_unit=self.rate_unit)

    def close(self) -> None:
        """Stop the ticker; the bar is closed, or a last line says how long it took."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._ticker.join()
        if self._bar is not None:
            self._bar.close()
            return
        notice(self.line(final=True))

    def _redraw(self) -> None:
        """Show the units done on the bar; below one whole unit, none (tqdm then shows no
        rate and no ETA rather than one from a sliver of a unit)."""
        if self._bar is not None:
            with self._lock:
                if self._paused:
                    return
                self._bar.n = self.shown if self.shown >= 1 else 0
                self._bar.refresh()

    def _tick(self) -> None:
        wait = REFRESH_SECONDS if self._bar is not None else self.interval
        while not self._stop.wait(wait):
            if self._bar is None:
                notice(self.line())
                continue
            with self._lock:
                if not self._paused:
                    self._bar.refresh()


class NoProgress:
    """Progress that shows nothing (``progress=False``): ``Progress``'s calls, doing nothing."""

    def advance(self, units: int) -> None: ...
    def partial(self, units: float) -> None: ...
    def say(self, text: str) -> None: ...
    def close(self) -> None: ...

    @contextmanager
    def paused(self) -> Iterator[None]:
        """The block runs; nothing is shown."""
        yield
