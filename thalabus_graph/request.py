"""One query as it was asked: ``QueryRequest``, the value every query entry point builds.

``ThalabusGraph.query``, ``rag_fragments`` and the adapters build one frozen request and hand
it to the query pipeline (``querying.Queries.answer``), which reads it top to bottom; nothing
of a query's own arguments is threaded through constructors beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_SESSION = "default"
"""The session a dataset is written in when the caller names none."""


@dataclass(frozen=True)
class QueryRequest:
    """A query and how its answer is wanted.

    Attributes:
        text: the query in the Thalabus language.
        ontology_id: the ontology every search checks (None: every document); the CLI's
            ``--ontology-id`` and MCP's ``ontology_id``.
        subset_of_datasetids: the parent datasets every search checks (None: no dataset
            scope); the CLI's ``--subset-of-datasetids`` and MCP's ``subset_of_datasetids``.
        limit: the results wanted (None: the configured pools, every result).
        language: the query's language (ISO 639-1 code or name; None: detected per phrase).
        return_documents: aggregate the fragments to documents.
        create_dataset: write the raw fragments as a dataset.
        automatically_rerank: rerank each branch before combining.
        session: the session a written dataset belongs to.
        profile: attach the executed plan.
        strict_categories: raise for an unknown category instead of warning.
        cut: cut the results to ``limit`` (the fast path selects from the raw fragments).
        required_filter: a filter of categories the query is held to (``query.required``),
            beside the connection's own.
        context: a read-only Cypher fragment run for each result (``results.context``).
        min_score: the floor of semantic scores instead of ``MIN_SCORE`` (None: that one);
            the fast path asks with ``MIN_RERANKING_SCORE_DOC``, its own cut-off.
        held: the connection holds its queries to a required filter (set by the engine).
    """

    text: str
    ontology_id: str | None = None
    subset_of_datasetids: Sequence[str] | None = None
    limit: int | None = None
    language: str | None = None
    return_documents: bool = True
    create_dataset: bool = False
    automatically_rerank: bool = False
    session: str = DEFAULT_SESSION
    profile: bool = False
    strict_categories: bool = False
    cut: bool = True
    required_filter: str | None = None
    context: str | None = None
    min_score: float | None = None
    held: bool = False

    @property
    def viewed(self) -> bool:
        """Whether the query sees only a required filter's view: then nothing about the
        graph outside it may come back, so its vocabulary check is quiet (a warning or a
        "did you mean" would tell which names and values exist beyond the view)."""
        return self.held or self.required_filter is not None
