"""`OpenTelemetryTracer`: the reranking stage's `Tracer` on top of ``opentelemetry-api``.

Optional: install the ``otel`` extra (``pip install 'thalabus-graph[otel]'``). Without an SDK
configured, OpenTelemetry's API is a no-op, so the adapter costs next to nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

from thalabus_graph.errors import CapabilityError
from thalabus_graph.rerank.tracing import Span

try:  # the extra may be missing; say so at construction, not at import
    from opentelemetry import trace as _otel_trace
except ImportError:  # pragma: no cover - exercised only without the extra
    _otel_trace = None  # type: ignore[assignment]

INSTRUMENTATION_NAME = "thalabus_graph.rerank"


class OpenTelemetryTracer:
    """Maps the stage's spans and events onto OpenTelemetry.

    ``span(name)`` starts a current OpenTelemetry span; ``event(name, attributes)`` adds an
    event to the current span (or records a zero-length span when none is open), so the
    ``thalabus.rerank.degraded`` / ``reranked`` events land inside the ``thalabus.rerank``
    span of the call they belong to. Attribute values that OpenTelemetry cannot carry are
    sent as strings.

    Example:
        >>> tracer = OpenTelemetryTracer()                                     # doctest: +SKIP
        >>> stage = RerankingRetriever(inner, reranker, tracer=tracer)         # doctest: +SKIP

    Raises:
        CapabilityError: ``opentelemetry-api`` is not installed.
    """

    def __init__(self, tracer: Any = None) -> None:
        if tracer is None:
            if _otel_trace is None:
                raise CapabilityError("OpenTelemetry is not installed: pip install "
                                      "'thalabus-graph[otel]' (opentelemetry-api)")
            tracer = _otel_trace.get_tracer(INSTRUMENTATION_NAME)
        self._tracer = tracer

    @contextlib.contextmanager
    def span(self, name: str) -> Iterator[Span]:
        """A current OpenTelemetry span for the ``with`` block."""
        with self._tracer.start_as_current_span(name) as span:
            yield _OtelSpan(span)

    def event(self, name: str, attributes: Mapping[str, object]) -> None:
        """An event on the current span, or a zero-length span of its own."""
        values = _attributes(attributes)
        current = _otel_trace.get_current_span() if _otel_trace is not None else None
        if current is not None and current.is_recording():
            current.add_event(name, values)
            return
        with self._tracer.start_as_current_span(name) as span:
            span.set_attributes(values)


class _OtelSpan:
    """A `Span` over an OpenTelemetry span."""

    def __init__(self, span: Any) -> None:
        self._span = span

    def set_attributes(self, attributes: Mapping[str, object]) -> None:
        self._span.set_attributes(_attributes(attributes))


def _attributes(attributes: Mapping[str, object]) -> dict[str, Any]:
    """Flat OpenTelemetry attributes: bool, int, float and str kept, other values as text."""
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        if value is None:
            continue
        out[key] = value if isinstance(value, bool | int | float | str) else str(value)
    return out


__all__ = ["INSTRUMENTATION_NAME", "OpenTelemetryTracer"]
