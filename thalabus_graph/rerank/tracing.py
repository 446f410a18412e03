"""The `Tracer` protocol the reranking stage reports to, and an in-memory `RecordingTracer`.

Events have a dotted name (``thalabus.rerank.degraded``) and flat attributes. A tracer that
also has ``span(name)`` (`SpanTracer`) gets one timed ``thalabus.rerank`` span per stage call;
`thalabus_graph.rerank.otel.OpenTelemetryTracer` maps both onto OpenTelemetry.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

DEGRADED = "thalabus.rerank.degraded"
"""Event name: the stage kept the inner order; attribute ``reason`` says why."""
RERANKED = "thalabus.rerank.reranked"
"""Event name: the stage reordered the hits; attributes count scored and unscored hits."""
RERANK_SPAN = "thalabus.rerank"
"""Span name: one stage call; attributes candidates, kept, reranked, degraded_reason, usage.*."""


@runtime_checkable
class Tracer(Protocol):
    """Receives named events with attributes (adapt OpenTelemetry or a logger to it)."""

    def event(self, name: str, attributes: Mapping[str, object]) -> None:
        """Record one event."""
        ...


@runtime_checkable
class Span(Protocol):
    """An open span the stage sets its outcome on."""

    def set_attributes(self, attributes: Mapping[str, object]) -> None:
        """Add flat attributes to the span."""
        ...


@runtime_checkable
class SpanTracer(Tracer, Protocol):
    """A `Tracer` that can also time a whole operation as a span."""

    def span(self, name: str) -> AbstractContextManager[Span]:
        """Open a span called ``name`` for the duration of the ``with`` block."""
        ...


@dataclass(frozen=True)
class TraceEvent:
    """One recorded event."""

    name: str
    attributes: Mapping[str, object] = field(default_factory=dict)


class RecordingTracer:
    """Keeps every event in memory, in order (thread-safe); for tests and diagnostics.

    Example:
        >>> tracer = RecordingTracer()
        >>> tracer.event(DEGRADED, {"reason": "budget"})
        >>> [e.attributes["reason"] for e in tracer.named(DEGRADED)]
        ['budget']
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: list[TraceEvent] = []
        self._spans: list[TraceEvent] = []

    @contextlib.contextmanager
    def span(self, name: str) -> Iterator[Span]:
        """Record the span, with its attributes, in `spans` when it closes (not in
        `events`)."""
        span = _RecordedSpan()
        try:
            yield span
        finally:
            with self._lock:
                self._spans.append(TraceEvent(name, dict(span.attributes)))

    @property
    def spans(self) -> list[TraceEvent]:
        """A copy of the closed spans so far (name and final attributes), in order."""
        with self._lock:
            return list(self._spans)

    def event(self, name: str, attributes: Mapping[str, object]) -> None:
        """Record one event."""
        with self._lock:
            self._events.append(TraceEvent(name, dict(attributes)))

    @property
    def events(self) -> list[TraceEvent]:
        """A copy of the events so far."""
        with self._lock:
            return list(self._events)

    def named(self, name: str) -> list[TraceEvent]:
        """The events called ``name``."""
        return [e for e in self.events if e.name == name]

    def clear(self) -> None:
        """Forget every event and span."""
        with self._lock:
            self._events.clear()
            self._spans.clear()


class _RecordedSpan:
    """The attributes set on a `RecordingTracer` span."""

    def __init__(self) -> None:
        self.attributes: dict[str, object] = {}

    def set_attributes(self, attributes: Mapping[str, object]) -> None:
        self.attributes.update(attributes)
