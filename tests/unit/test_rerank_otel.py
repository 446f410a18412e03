"""The OpenTelemetry adapter: a stage call exports one ``thalabus.rerank`` span (read back from
the SDK's in-memory exporter) with its outcome attributes and the stage's events inside it."""

from __future__ import annotations

import asyncio

import pytest
from opentelemetry.sdk import trace as sdk_trace
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.unit.test_rerank_stage import HITS, Inner, Table
from thalabus_graph.rerank import RerankingRetriever
from thalabus_graph.rerank.otel import OpenTelemetryTracer
from thalabus_graph.rerank.tracing import DEGRADED, RERANK_SPAN, RERANKED


@pytest.fixture()
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


def tracer_for(exporter: InMemorySpanExporter) -> OpenTelemetryTracer:
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return OpenTelemetryTracer(provider.get_tracer("test"))


def test_a_reranked_call_exports_its_span(exporter: InMemorySpanExporter) -> None:
    scores = {h.chunk_id: i / 100 for i, h in enumerate(HITS)}
    stage = RerankingRetriever(Inner(), Table(scores), candidates=8, top_n=3,
                               tracer=tracer_for(exporter))
    asyncio.run(stage.retrieve("q"))
    (span,) = exporter.get_finished_spans()
    assert span.name == RERANK_SPAN
    assert dict(span.attributes or {}) == {"candidates": 8, "kept": 3, "reranked": True,
                                           "usage.total_tokens": 10}
    assert [e.name for e in span.events] == [RERANKED]
    assert span.events[0].attributes is not None
    assert span.events[0].attributes["scored"] == 8


def test_a_degraded_call_names_its_reason(exporter: InMemorySpanExporter) -> None:
    stage = RerankingRetriever(Inner(), Table({}, delay=1.0), candidates=4, top_n=2,
                               timeout_seconds=0.05, tracer=tracer_for(exporter))
    asyncio.run(stage.retrieve("q"))
    (span,) = exporter.get_finished_spans()
    attributes = dict(span.attributes or {})
    assert attributes["degraded_reason"] == "timeout" and attributes["reranked"] is False
    assert [e.name for e in span.events] == [DEGRADED]


def test_an_event_outside_a_span_becomes_a_span_of_its_own(
        exporter: InMemorySpanExporter) -> None:
    tracer_for(exporter).event(DEGRADED, {"reason": "budget", "candidates": 3, "x": None,
                                          "obj": ("a", 1)})
    (span,) = exporter.get_finished_spans()
    assert span.name == DEGRADED
    assert dict(span.attributes or {}) == {"reason": "budget", "candidates": 3,
                                           "obj": "('a', 1)"}
