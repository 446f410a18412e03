"""The `Tracer` protocol the reranking stage reports to, and an in-memory `RecordingTracer`.

Events have a dotted name (``thalabus.rerank.degraded``) and flat attributes.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

DEGRADED = "thalabus.rerank.degraded"
"""Event name: the stage kept the inner order; attribute ``reason`` says why."""
RERANKED = "thalabus.rerank.reranked"
"""Event name: the stage reordered the hits; attributes count scored and unscored hits."""


@runtime_checkable
class Tracer(Protocol):
    """Receives named events with attributes (adapt OpenTelemetry or a logger to it)."""

    def event(self, name: str, attributes: Mapping[str, object]) -> None:
        """Record one event."""
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
        """Forget every event."""
        with self._lock:
            self._events.clear()
