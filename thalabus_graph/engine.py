"""``ThalabusGraph``: the entry point that ties parsing, searches, datasets and reranking.

The object holds a driver, configuration and caches that only save reads (the vocabulary rows
its queries read, the state of the filtered indexes and the text languages, each checked
again before it is trusted): no answer depends on an earlier call, so any number of workers
can share one Neo4j (or a cluster, through ``neo4j://`` routing URIs).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from thalabus_graph import text_languages, warm_up
from thalabus_graph.application import ApplicationGraph
from thalabus_graph.bounds import within_budget
from thalabus_graph.dataset_rerank import RerankResult as RerankResult
from thalabus_graph.dataset_rerank import rerank_dataset
from thalabus_graph.datasets import Datasets
from thalabus_graph.embeddings import Embedder, embedder_from_settings
from thalabus_graph.fragments import Fragment
from thalabus_graph.goals import GoalContext, Goals
from thalabus_graph.graph.connection import Connection
from thalabus_graph.graph.database import Database
from thalabus_graph.ingest import Ingestor, IngestReport
from thalabus_graph.ingest.source import SourceDocument
from thalabus_graph.plan.categories import QueryReads
from thalabus_graph.query import Node
from thalabus_graph.querying import Queries
from thalabus_graph.request import DEFAULT_SESSION, QueryRequest
from thalabus_graph.rerank import (
    Reranker,
    SelectionPolicy,
    reranker_from_settings,
)
from thalabus_graph.rerank.outcome import BranchOutcomes
from thalabus_graph.results.documents import DocumentHit as DocumentHit
from thalabus_graph.results.documents import documents_of
from thalabus_graph.results.query_result import QueryResult as QueryResult
from thalabus_graph.search.evaluator import Evaluator
from thalabus_graph.settings import Settings
from thalabus_graph.warm_up import WarmUp

if TYPE_CHECKING:
    from thalabus_graph.graph.migrations import MigrationReport

logger = logging.getLogger(__name__)


class ThalabusGraph(ApplicationGraph):
    """The retrieval engine over one Neo4j database.

    Example:
        >>> g = ThalabusGraph.connect("bolt://127.0.0.1:7687")      # doctest: +SKIP
        >>> g.migrate(); g.ingest("corpus.jsonl")                    # doctest: +SKIP
        >>> g.query('"asylum seeker" AND COUNTRY_OF_ORIGIN=IQ').documents  # doctest: +SKIP
    """

    def __init__(self, db: Database, *, settings: Settings | None = None,
                 embedder: Embedder | None = None, reranker: Reranker | None = None,
                 bookmarks: Iterable[str] = (), required_filter: str | None = None) -> None:
        self.db = db
        if bookmarks:
            db.wait_for(bookmarks)
        self.owns_database = False
        self.settings = settings or Settings.from_env()
        self.in_flight = threading.BoundedSemaphore(self.settings.max_concurrent_queries)
        self._embedder = embedder
        self.reranker: Reranker = reranker or reranker_from_settings(self.settings)
        self.datasets = Datasets(db, self.settings)
        self.goals = Goals(db, self.settings, self.datasets)
        self.queries = Queries(db, self.settings, self.datasets,
                               embedder=lambda: self.embedder, reranker=lambda: self.reranker,
                               required_filter=required_filter)
        self.required_filter = required_filter
        """The filter every query of this object is held to (None: none)."""

    @classmethod
    def connect(cls, uri: str | None = None, *, auth: tuple[str, str] | None = None,
                database: str | None = None, settings: Settings | None = None,
                embedder: Embedder | None = None, reranker: Reranker | None = None,
                bookmarks: Iterable[str] = (), required_filter: str | None = None
                ) -> ThalabusGraph:
        """Connect to Neo4j (``bolt://`` or routing ``neo4j://``); the embedder loads lazily.

        What is not given comes from ``NEO4J_URI``, ``NEO4J_USERNAME``, ``NEO4J_PASSWORD`` and
        ``NEO4J_DATABASE`` (see ``thalabus_graph.graph.connection``), as for the CLI.
        ``bookmarks`` (another process's ``result.bookmarks``): waited for before this
        returns (``wait_for``), so the first read already sees that state.
        ``required_filter``: categories every query of this object is held to
        (``application``).
        """
        target = Connection.resolve(uri, database=database)
        db = Database.connect(target.uri, auth=auth if auth is not None else target.auth,
                              database=target.database)
        try:
            graph = cls(db, settings=settings, embedder=embedder, reranker=reranker,
                        bookmarks=bookmarks, required_filter=required_filter)
        except Exception:
            db.close()
            raise
        graph.owns_database = True
        return graph

    def close(self) -> None:
        """Close the driver when ``connect`` opened it (a given ``Database`` stays open)."""
        if self.owns_database:
            self.db.close()

    def __enter__(self) -> ThalabusGraph:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def bookmarks(self) -> tuple[str, ...]:
        """The bookmarks of everything this object has written or waited for (its one
        bookmark manager, shared by all its sessions)."""
        return self.db.bookmarks()

    def wait_for(self, bookmarks: Iterable[str]) -> None:
        """Wait until the server has applied ``bookmarks`` (another process's result's); from
        then on every read of this object sees that state (``Database.wait_for``)."""
        self.db.wait_for(bookmarks)

    @property
    def embedder(self) -> Embedder:
        """The configured embedder (local e5 unless ``embedder_url`` is set), made on first use."""
        if self._embedder is None:
            self._embedder = embedder_from_settings(self.settings)
        return self._embedder

    # --- schema and ingestion ------------------------------------------------------------
    def migrate(self) -> MigrationReport:
        """Apply pending migrations, then label the text of documents ingested before the
        per-language indexes (``text_languages.backfill``; ``labelled_documents`` on the
        report); returns the migration report."""
        from thalabus_graph.graph.migrations import MigrationRunner

        report = MigrationRunner(self.db, self.settings).migrate()
        report = replace(report, labelled_documents=text_languages.backfill(self.db))
        self.queries.forget(indexes=True)  # the migration may have built filtered indexes
        return report

    def ingest(self, documents: str | os.PathLike[str] | Iterable[SourceDocument | dict[str, Any]],
               *, strict: bool = False, progress: bool | None = None,
               embed: bool = True) -> IngestReport:
        """Ingest JSON Lines (a path) or documents; see ``thalabus_graph.ingest``.

        ``embed=False`` ingests only supplied embeddings (no model is loaded).
        """
        embedder = self.embedder if embed else None
        report = Ingestor(self.db, self.settings, embedder).ingest(
            documents, strict=strict, progress=progress)
        self.queries.forget(indexes=False)  # the documents may bring a language
        if report.documents >= warm_up.MIN_DOCUMENTS:
            warmed = self.warm_up(progress=progress is not False)
            report.warm_up_seconds, report.warm_up_problem = warmed.seconds, warmed.problem
        report.bookmarks = self.db.bookmarks()
        return report

    def warm_up(self, *, progress: bool = False) -> WarmUp:
        """Run every query form once on the graph's own data, writing nothing, so that later
        queries find their statements planned: Neo4j plans a statement the first time it sees
        it, seconds for a search statement on a freshly started server. Worth calling after
        a server start, before serving queries; a bulk ingest does it itself. An empty graph
        (no embedded fragment) runs nothing. A failure is reported in ``problem``, not
        raised. ``progress``: show the queries run, rate and ETA, as ``ingest`` does."""
        return warm_up.warm_up(self, progress=progress)

    # --- querying ------------------------------------------------------------------------
    def evaluate(self, query: str | Node, *, ontology_id: str | None = None,
                 subset_of_datasetids: Sequence[str] | None = None, reference: bool = False,
                 automatically_rerank: bool = False, profile: bool = False,
                 document_details: bool = False, reads: QueryReads | None = None,
                 rerank_outcomes: BranchOutcomes | None = None, language: str | None = None
                 ) -> tuple[list[Fragment], Evaluator]:
        """Raw fragments of a query and its evaluator (``Queries.evaluate``)."""
        return self.queries.evaluate(
            query, ontology_id=ontology_id, subset_of_datasetids=subset_of_datasetids,
            reference=reference, automatically_rerank=automatically_rerank, profile=profile,
            document_details=document_details, reads=reads, rerank_outcomes=rerank_outcomes,
            language=language)

    def stream(self, text: str, *, ontology_id: str | None = None,
               subset_of_datasetids: Sequence[str] | None = None,
               required_filter: str | None = None) -> Iterator[Fragment]:
        """A query's raw fragments, best first, as an iterator (``Queries.stream``)."""
        return self.queries.stream(QueryRequest(text, ontology_id, subset_of_datasetids,
                                                required_filter=required_filter))

    @within_budget
    def query(self, text: str, *, ontology_id: str | None = None,
              subset_of_datasetids: Sequence[str] | None = None, return_documents: bool = True,
              create_dataset: bool = False, automatically_rerank: bool = False,
              session: str = DEFAULT_SESSION, profile: bool = False,
              strict_categories: bool = False, language: str | None = None,
              limit: int | None = None, required_filter: str | None = None,
              context: str | None = None) -> QueryResult:
        """Run a Thalabus query.

        The dataset (when asked) is written from the raw fragments before any aggregation.
        ``return_documents`` aggregates to documents (best fragment score each, with details);
        ``profile`` attaches the executed plan (steps, rows, milliseconds). Category names,
        values and the ontology that no stored document has are reported in ``warnings``
        (with a "did you mean" when only the letter case differs); ``strict_categories``
        raises ``UnknownCategoryError`` instead, before anything runs. ``language`` (an ISO
        639-1 code or a language's name) is the query's language: its phrases' text searches
        use that language's analyzer; None detects each phrase's language among those the
        graph holds (docs/architecture.md, "Text search by language").

        ``limit``: the number of results wanted (documents, or fragments with
        ``return_documents=False``); the per-source and text pools and the vector over-fetch
        are sized from it (``plan.cost.sized``) and the result is cut to it. None keeps the
        configured pools (``top_n_*``) and returns every result. The dataset, when asked, is
        still written from the raw fragments of the sized pools.

        ``required_filter`` (beside the connection's) and ``context``: see ``application``.

        Raises:
            ConfigurationError: ``limit`` is not a whole number from 1 to ``index_max_k``.
            ContextError: the context writes, calls a procedure or does not compile.
        """
        return self.queries.answer(QueryRequest(
            text, ontology_id, subset_of_datasetids, limit, language,
            return_documents=return_documents, create_dataset=create_dataset,
            automatically_rerank=automatically_rerank, session=session, profile=profile,
            strict_categories=strict_categories, required_filter=required_filter,
            context=context, held=self.queries.required is not None))

    @within_budget
    def explain(self, text: str, *, ontology_id: str | None = None,
                subset_of_datasetids: Sequence[str] | None = None,
                strict_categories: bool = False, language: str | None = None,
                limit: int | None = None, required_filter: str | None = None
                ) -> dict[str, Any]:
        """The parsed query and the compiled plan as a tree, without running any search
        (``Queries.explain``; the arguments as in ``query``)."""
        return self.queries.explain(QueryRequest(
            text, ontology_id, subset_of_datasetids, limit, language,
            strict_categories=strict_categories, required_filter=required_filter,
            held=self.queries.required is not None))

    def documents_of(self, fragments: Sequence[Fragment], *,
                     known: Mapping[str, Sequence[Any]] | None = None) -> list[DocumentHit]:
        """Aggregate fragments to documents: best score each, details attached, best first
        (``results.documents.documents_of``; ``known``: details the searches already read)."""
        return documents_of(self.db, fragments, known=known)

    @within_budget
    def rag_fragments(self, text: str, *, ontology_id: str | None = None,
                      subset_of_datasetids: Sequence[str] | None = None,
                      create_dataset: bool = False, session: str = DEFAULT_SESSION,
                      strict_categories: bool = False, goal: str | None = None,
                      language: str | None = None, limit: int | None = None,
                      required_filter: str | None = None, context: str | None = None
                      ) -> QueryResult:
        """The fast path: raw fragments filtered by ``MIN_RERANKING_SCORE_DOC``, capped at
        ``MAX_FRAGMENTS_PER_DOC`` per document, sorted, cut to ``MAX_RAG_OUTPUT_FRAG``
        (category warnings as in ``query``).

        ``create_dataset`` stores what the fast path returned (the selection, not the raw
        fragments), so the dataset is the result that is "preserved and forwarded".
        ``goal``: the selection becomes the goal's own RAG fragments (``Goals.add_fragments``,
        the goal created when new), which ``goal_context`` collects first. ``language`` as in
        ``query``. ``limit``: the fragments wanted; the pools are sized from it as in ``query``
        and the selection is cut to ``min(limit, MAX_RAG_OUTPUT_FRAG)``. ``required_filter``
        and ``context`` as in ``query``."""
        return self.queries.fast_path(QueryRequest(
            text, ontology_id, subset_of_datasetids, limit, language, return_documents=False,
            session=session, strict_categories=strict_categories, cut=False,
            required_filter=required_filter, context=context,
            held=self.queries.required is not None),
            create_dataset=create_dataset, goal=goal, goals=self.goals)

    # --- reranking -----------------------------------------------------------------------

    def rerank_dataset(self, dataset_id: str, query_text: str | None = None, *,
                       session: str | None = None, policy: SelectionPolicy | None = None,
                       max_output: int | None = None, goal: str | None = None,
                       clauses: str | None = None) -> RerankResult:
        """Rerank a dataset's members in rounds and write ``{session}#rerank_{n}``
        (``dataset_rerank.rerank_dataset`` says what is asked and what the new dataset
        records), with this object's bookmarks.

        Raises:
            ConfigurationError: raised by the reranker (never written as a degraded dataset),
                or an unknown ``clauses``.
        """
        result = rerank_dataset(self.datasets, self.reranker, self.settings, dataset_id,
                                query_text, session=session, policy=policy,
                                max_output=max_output, goal=goal, clauses=clauses)
        return replace(result, bookmarks=self.db.bookmarks())

    def goal_context(self, goalid: str, **kwargs: Any) -> GoalContext:
        """The goal's RAG context and message (see ``goals.Goals.context``)."""
        return self.goals.context(goalid, **kwargs)
