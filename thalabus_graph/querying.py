"""The query pipeline of one graph object: ``Queries.answer`` reads a ``QueryRequest`` top to
bottom.

parse -> evaluate (``search.evaluator``: the evaluator prepares the query once, rewritten
with its vocabulary check and limit, ``plan.rewrite.prepare``, then compiles and runs it; its
first count settles the vocabulary read, ``search.vocabulary``) -> collect (dataset,
documents, warnings, cut, profile). A query whose vocabulary read turns out stale is planned
again from the fresh row: the one loop in ``_searched``. ``Queries`` keeps what a graph
object's queries share: the vocabulary rows read, whether the ontology-filtered vector
indexes serve and which languages the text is indexed in (each re-read at most once per
``IN_INDEX_RECHECK_SECONDS``).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from thalabus_graph.bounds import parse_for_explain, parse_within_limits
from thalabus_graph.datasets import Datasets
from thalabus_graph.embeddings import Embedder
from thalabus_graph.errors import GraphError, PlanError, StaleVocabulary
from thalabus_graph.fragments import Fragment, rag_select
from thalabus_graph.goals import Goals
from thalabus_graph.graph.category_definitions import CategoryDefinition
from thalabus_graph.graph.database import Database
from thalabus_graph.graph.migrations.runner import require_migrated
from thalabus_graph.plan import cost
from thalabus_graph.plan.categories import QueryReads
from thalabus_graph.plan.rewrite import Prepared, rewrite
from thalabus_graph.plan.steps import InIndexFilter
from thalabus_graph.query import Node, parse, rerank_query, serialize
from thalabus_graph.query.ast import Semantic, id_form, id_list
from thalabus_graph.query.limits import QueryLimits
from thalabus_graph.query.required import required_filter as required_filter_node
from thalabus_graph.query.required import restricted
from thalabus_graph.query_warning import QueryWarning
from thalabus_graph.request import QueryRequest
from thalabus_graph.rerank import Reranker
from thalabus_graph.rerank.branches import BranchRerank
from thalabus_graph.rerank.outcome import BranchOutcomes
from thalabus_graph.results.attach import shown, with_context
from thalabus_graph.results.context import GraphContext
from thalabus_graph.results.documents import DocumentHit, log_sources
from thalabus_graph.results.plan_view import Plan
from thalabus_graph.results.query_result import QueryResult
from thalabus_graph.search.evaluator import Evaluator, Shared, evaluator_for, pool_limit
from thalabus_graph.search.executor import SearchExecutor
from thalabus_graph.search.languages import GraphLanguages, TextLanguageState
from thalabus_graph.search.procedure import ProcedureState
from thalabus_graph.search.scope import InIndexState
from thalabus_graph.search.vector import recovered_by_retry
from thalabus_graph.search.vocabulary import Vocabularies, check_query
from thalabus_graph.settings import Settings

IN_INDEX_RECHECK_SECONDS = 60.0
"""How long the state of the ontology-filtered vector indexes (and the languages of the text
indexes) is trusted before it is read again (``Queries.in_index_filter``)."""


@dataclass(frozen=True)
class _Run:
    """One evaluated query before it is collected: its parsed form, its checked limit, its
    evaluator, raw fragments, documents (when aggregated already), when its evaluation
    started and its vocabulary warnings."""

    node: Node
    limit: int | None
    evaluator: Evaluator
    fragments: list[Fragment]
    documents: list[DocumentHit] | None
    start: float
    warnings: list[QueryWarning] = field(default_factory=list)
    shown: bool = False
    """Whether the documents and the graph context's rows are made already
    (``results.attach.shown``)."""


def _one_read(searched: Callable[[Queries, QueryRequest, GraphContext | None], _Run]
              ) -> Callable[[Queries, QueryRequest, GraphContext | None], _Run]:
    """``searched`` with every read it makes in one read transaction (``Database.one_read``),
    unless the request reranks branches (a rerank calls its service mid-evaluation, so no
    transaction is held open). A failure the searches recover from ends the shared
    transaction: ``searched`` then runs again with a transaction a statement, where they
    do."""
    @functools.wraps(searched)
    def in_one_read(queries: Queries, request: QueryRequest,
                    context: GraphContext | None) -> _Run:
        if request.automatically_rerank or _one_statement(queries, request, context):
            return searched(queries, request, context)
        try:
            return queries.db.one_read(lambda: searched(queries, request, context),
                                       what="query")
        except GraphError as exc:
            if not recovered_by_retry(exc):
                raise
            return searched(queries, request, context)

    return in_one_read


def _one_statement(queries: Queries, request: QueryRequest,
                   context: GraphContext | None) -> bool:
    """Whether the request reads with one statement: a lone semantic phrase, unscoped and
    unfiltered, on a connection whose server runs this engine's plugin (known from an
    earlier query), with no graph context and no dataset to write. Its call and the
    documents' details it returns are the whole read, so no transaction is opened around
    it (``Database._read`` runs it as an auto-commit one). A phrase the plugin turns out
    not to serve runs its statements a transaction each, as a query does after a
    recovered failure."""
    procedures = queries.shared.procedures
    if (context is not None or request.create_dataset or request.ontology_id is not None
            or request.subset_of_datasetids is not None or queries.required is not None
            or request.required_filter is not None
            or procedures is None or not procedures.known_usable()):
        return False
    return isinstance(parse(request.text, limits=_limits(queries.settings)), Semantic)


class Queries:
    """The query side of one ``ThalabusGraph``: the query pipeline, and the executors and
    evaluators that explain, ``evaluate`` and ``stream`` use.

    ``embedder`` and ``reranker`` are read through callables, so the graph object's lazily
    made embedder is loaded only by a search that embeds, and a reranker set on the graph
    object later is the one used.
    """

    def __init__(self, db: Database, settings: Settings, datasets: Datasets, *,
                 embedder: Callable[[], Embedder], reranker: Callable[[], Reranker],
                 required_filter: str | None = None) -> None:
        self.db = db
        self.required = (None if required_filter is None
                         else required_filter_node(required_filter, _limits(settings)))
        """The connection's required filter (``query.required``), parsed once."""
        self.settings = settings
        self.datasets = datasets
        # vocabulary rows: a query asked again plans with its row (search.vocabulary)
        self.vocabulary = Vocabularies(db, self.checked_datasets)
        self.shared = Shared(db, settings, embedder, reranker, self.vocabulary,
                             InIndexState(db, settings, IN_INDEX_RECHECK_SECONDS),
                             TextLanguageState(db, IN_INDEX_RECHECK_SECONDS),
                             ProcedureState(db, settings))

    def forget(self, *, indexes: bool) -> None:
        """Read the text languages again on next use (documents may bring one) and, with
        ``indexes`` (after a migration), the filtered vector indexes' state too."""
        self.shared.text_languages.forget()
        if indexes:
            self.shared.in_index.forget()

    # --- the pipeline --------------------------------------------------------------------
    def answer(self, request: QueryRequest) -> QueryResult:
        """``ThalabusGraph.query``'s work: the graph context checked, then searched (parse,
        prepare, vocabulary, compile, evaluate, documents, context rows), then collected
        (dataset, documents, warnings, cut, profile).

        Raises:
            ContextError: the graph context is refused (before anything runs).
        """
        context = GraphContext.of(self.db, request.context)
        run = self._searched(request, context)
        return self._collected(request, run, context)

    @_one_read
    def _searched(self, request: QueryRequest, context: GraphContext | None) -> _Run:
        """Parse, evaluate (the evaluator prepares the query first: rewritten once, its
        vocabulary check, its limit) and aggregate, from nothing (a retry runs it again). An
        attempt planned with a vocabulary row seen before whose counts turn out stale is
        planned again from the fresh row (``search.vocabulary``): the one loop here."""
        node = self.held(request, parse(request.text, limits=_limits(self.settings)))
        stale: Mapping[str, Any] | None = None
        prepared: Prepared | None = None
        while True:
            start = time.perf_counter()
            evaluator = evaluator_for(self.shared, request, node, stale, prepared)
            try:
                fragments = evaluator.results(node)
                warnings = evaluator.executor.vocabulary_warnings()
            except StaleVocabulary as changed:
                stale, prepared = changed.row, evaluator.prepared
                continue
            limit = None if evaluator.prepared is None else evaluator.prepared.limit
            log_sources(fragments)
            run = _Run(node, limit, evaluator, fragments, None, start, warnings)
            # a dataset is written from the raw fragments before any aggregation: a query
            # writing one is shown once it is written (``_collected``); any other is shown
            # here, its context's rows read in the query's transaction
            if request.create_dataset:
                return run
            fragments, documents = shown(self.db, fragments,
                                         documents=request.return_documents,
                                         context=context, known=evaluator.executor.details,
                                         limit=limit if request.cut else None)
            return replace(run, fragments=fragments, documents=documents, shown=True)

    def _collected(self, request: QueryRequest, run: _Run,
                   context: GraphContext | None = None) -> QueryResult:
        """The result: the dataset written from the raw fragments, then the documents when
        not aggregated yet, the warnings (vocabulary, calibrated scale, rerank), the cut and
        the profile."""
        elapsed = (time.perf_counter() - run.start) * 1000
        evaluator, fragments, documents, limit = (run.evaluator, run.fragments,
                                                  run.documents, run.limit)
        if request.create_dataset or not fragments:
            # an empty answer (or a dataset about to be written) from a database never
            # migrated says so: its searches had no index to fail on, so nothing else would
            require_migrated(self.db, "query")
        dataset_ids: list[str] = []
        if request.create_dataset:  # the canonical text only where it is stored or shown
            dataset_ids.append(self.datasets.create(
                fragments, session=request.session, query=serialize(run.node),
                flags=evaluator.rerank_flags))
        if not run.shown:
            fragments, documents = shown(self.db, fragments, documents=request.return_documents,
                                         context=context, known=evaluator.executor.details,
                                         limit=limit if request.cut else None)
        warnings = [*run.warnings, *evaluator.executor.scale.warnings()]
        if evaluator.rerank_warning is not None:
            warnings.append(QueryWarning("rerank", rerank_query(run.node), None,
                                         evaluator.rerank_warning))
        if request.cut and limit is not None and documents is None:
            fragments = fragments[:limit]  # documents_of already kept the best `limit`
        plan = None
        if request.profile and evaluator.plan is not None:
            plan = Plan(query=serialize(run.node), ms=round(elapsed, 3),
                        embed_ms=round(evaluator.executor.embed_ms, 3),
                        fragments=len(fragments), tree=evaluator.plan.to_dict(evaluator.profile))
        return QueryResult(request.text, fragments, documents, dataset_ids, plan, warnings,
                           self.db.bookmarks(), evaluator.rerank_flags)

    # --- what the application's graph adds to a query ------------------------------------
    def held(self, request: QueryRequest, node: Node) -> Node:
        """``node`` held to the connection's required filter and the request's
        (``query.required.restricted``): the query on the left of an AND no text widens."""
        asked = (None if request.required_filter is None
                 else required_filter_node(request.required_filter, _limits(self.settings)))
        return restricted(node, (self.required, asked))

    def fast_path(self, request: QueryRequest, *, create_dataset: bool, goal: str | None,
                  goals: Goals) -> QueryResult:
        """``ThalabusGraph.rag_fragments``: the raw fragments of ``request`` selected by
        ``fragments.rag_select``; the selection, not the raw fragments, is what a dataset
        stores and a goal takes as its own RAG fragments. Its query's semantic floor is
        ``MIN_RERANKING_SCORE_DOC`` instead of ``MIN_SCORE``: the fast path's own cut-off on
        the same calibrated scale, so it acts (a floor above it would have dropped every
        fragment it could drop)."""
        context = GraphContext.of(self.db, request.context)
        s = self.settings
        result = self.answer(replace(request, context=None,
                                     min_score=s.min_reranking_score_doc))
        limit = request.limit
        total = s.max_rag_output_frag if limit is None else min(limit, s.max_rag_output_frag)
        picked = rag_select(result.fragments, min_score=s.min_reranking_score_doc,
                            max_per_doc=s.max_fragments_per_doc, max_total=total)
        dataset_ids: list[str] = []
        if create_dataset:
            dataset_ids.append(self.datasets.create(picked, session=request.session,
                                                    query=serialize(parse(request.text))))
        if goal is not None:
            goals.add_fragments(goal, picked)
        if context is not None:
            picked = with_context(self.db, context, picked, None)[0]
        return QueryResult(request.text, picked, None, dataset_ids, warnings=result.warnings,
                           bookmarks=self.db.bookmarks())

    # --- executors for explain, evaluate and stream --------------------------------------
    def executor(self, *, ontology_id: str | None = None,
                 subset_of_datasetids: Sequence[str] | None = None, profile: bool = False,
                 document_details: bool = False, embedder: Embedder | None = None,
                 language: str | None = None, limit: int | None = None,
                 stream_limit: int | None = None) -> SearchExecutor:
        """A search executor for one evaluation, its scope checked (an unknown parent
        dataset is an error); ``document_details``: its unfiltered searches also read their
        documents' details; ``embedder``: instead of the configured one, which is then not
        loaded; ``language``: the query's language for its text searches (None: detected
        per phrase); ``limit``: the results wanted, which size its pools
        (``plan.cost.sized``); ``stream_limit``: see ``SearchExecutor``."""
        ontology_id = id_form(ontology_id)
        datasetids = self.checked_datasets(id_list(subset_of_datasetids, "subset_of_datasetids"))
        shared = self.shared
        return SearchExecutor(self.db, self.settings, embedder or shared.embedder(),
                              limit=cost.check_limit(limit, self.settings),
                              ontologyid=ontology_id, datasetids=datasetids,
                              profile=profile, document_details=document_details,
                              in_index_state=shared.in_index, language=language,
                              text_languages=shared.text_languages,
                              stream_limit=stream_limit, procedures=shared.procedures)

    def in_index_filter(self, ontology_id: str | None) -> InIndexFilter:
        """Whether searches scoped to ``ontology_id`` can use the ontology-filtered vector
        indexes (``search.scope.InIndexState``: read at most once per
        ``IN_INDEX_RECHECK_SECONDS``, never without an ontology)."""
        return self.shared.in_index.state(ontology_id)

    def text_languages(self) -> GraphLanguages:
        """The languages the graph's text is indexed in and whether their indexes serve
        (``search.languages.TextLanguageState``: read at most once per
        ``IN_INDEX_RECHECK_SECONDS``)."""
        return self.shared.text_languages.state()

    def checked_datasets(self, subset_of_datasetids: Sequence[str] | None
                         ) -> list[str] | None:
        """The parent datasets of the scope, checked to exist (an unknown id is an error; a
        query checks them with its vocabulary read instead). The scope is never
        materialised: every search checks the ontology (``$ontologyid``) and the datasets'
        membership (``$datasetids``) as Cypher patterns on its hits."""
        if subset_of_datasetids is None:
            return None
        for datasetid in subset_of_datasetids:
            self.datasets.get(datasetid)
        return list(subset_of_datasetids)

    def evaluate(self, query: str | Node, *, ontology_id: str | None = None,
                 subset_of_datasetids: Sequence[str] | None = None, reference: bool = False,
                 automatically_rerank: bool = False, profile: bool = False,
                 document_details: bool = False, reads: QueryReads | None = None,
                 rerank_outcomes: BranchOutcomes | None = None, language: str | None = None
                 ) -> tuple[list[Fragment], Evaluator]:
        """Raw fragments of a query (compiled plan, or the reference evaluator) and the
        evaluator, which holds the executed plan tree when ``profile`` is set
        (``document_details``: see ``executor``; ``reads``: the node counts, scope size and
        pattern counts already read with the query's vocabulary, ``check_query``)."""
        node = restricted(parse_within_limits(query, self.settings), (self.required,))
        ex = self.executor(ontology_id=ontology_id, subset_of_datasetids=subset_of_datasetids,
                           profile=profile, document_details=document_details,
                           language=language)
        reads = _know(self.db, ex, node, reads)
        branch = (BranchRerank(self.shared.reranker(), self.settings, rerank_outcomes)
                  if automatically_rerank else None)
        evaluator = Evaluator(ex, pushdown=not reference, rerank_branch=branch, record=profile,
                              pair_counts=reads.pair_counts)
        return evaluator.results(node), evaluator

    def stream(self, request: QueryRequest) -> Iterator[Fragment]:
        """``ThalabusGraph.stream``: the query's raw fragments, best first, as an iterator
        (``Evaluator.stream``: a pure filter query's stubs come straight from the driver, in
        constant memory)."""
        ex = self.executor(ontology_id=request.ontology_id,
                           subset_of_datasetids=request.subset_of_datasetids)
        node = self.held(request, parse_within_limits(request.text, self.settings))
        reads = _know(self.db, ex, node)
        return Evaluator(ex, pair_counts=reads.pair_counts).stream(node)

    def explain(self, request: QueryRequest) -> dict[str, Any]:
        """``ThalabusGraph.explain``: the parsed query and the compiled plan as a tree,
        without running any search: category and universe lookups (read transactions) give
        each filtered semantic search its estimated selectivity and chosen path. No query
        embedding is computed. Category warnings are listed as in ``query``
        (``strict_categories`` raises them); each text search shows its analyzer and the
        phrase's language. The limit sizes the pools as in ``query``; ``pools`` shows them."""
        from thalabus_graph.plan.explain import explained, viewed

        limit = cost.check_limit(request.limit, self.settings)
        node = self.held(request, parse_for_explain(request.text, self.settings))
        warnings, reads = check_query(self.db, node, request.ontology_id,
                                      _listed(request.subset_of_datasetids),
                                      rewrite(node).patterns,
                                      strict=request.strict_categories, quiet=request.viewed)
        ex = self.executor(ontology_id=request.ontology_id,
                           subset_of_datasetids=request.subset_of_datasetids,
                           embedder=_NoEmbedder(self.shared.embedder().model_id),
                           language=request.language, limit=pool_limit(request, node),
                           stream_limit=limit)
        ex.definitions = {name: CategoryDefinition(name, pattern)
                          for name, pattern in reads.definitions.items()}
        ex.preload(reads.sizes, reads.counts)
        out = {**explained(ex, node, warnings, reads.pair_counts), "limit": limit}
        return {**(viewed(out) if request.viewed else out), "pools": cost.pools(ex.settings)}


def _know(db: Database, ex: SearchExecutor, node: Node, reads: QueryReads | None = None
          ) -> QueryReads:
    """Give ``ex`` what ``node``'s vocabulary read returns (``reads``, else read now,
    ``check_query``): the counts and the graph-defined categories among its names; the
    read, whose values' counts the plan orders a filter pattern's literals by."""
    if reads is None:
        scope = ex.scope
        reads = check_query(db, node, scope.ontologyid, _listed(scope.datasetids),
                            rewrite(node).patterns)[1]
    ex.definitions = {name: CategoryDefinition(name, pattern)
                      for name, pattern in reads.definitions.items()}
    ex.preload(reads.sizes, reads.counts)
    return reads


def _limits(settings: Settings) -> QueryLimits:
    return QueryLimits.from_settings(settings)


def _listed(datasetids: Sequence[str] | None) -> list[str] | None:
    """The parent datasets of a scope as the statements take them (None: no dataset scope)."""
    return None if datasetids is None else list(datasetids)


class _NoEmbedder:
    """Stands in for the embedder where nothing may be embedded (explain), with the model id
    of the one a query would use (the calibration follows it)."""

    dimensions = 0

    def __init__(self, model_id: str) -> None:
        self.model_id = model_id

    def embed_queries(self, texts: Sequence[str]) -> Any:
        raise PlanError("explain does not embed queries")

    embed_passages = embed_queries

