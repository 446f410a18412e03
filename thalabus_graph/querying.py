"""The query pipeline of one graph object: ``Queries.answer`` reads a ``QueryRequest`` top to
bottom.

parse -> rewrite (once, ``plan.rewrite``) -> vocabulary (``search.vocabulary``) -> compile and
evaluate (``search.evaluator``) -> collect (documents, dataset, cut, profile). A query whose
vocabulary read turns out stale is planned again from the fresh row: the one loop in
``_searched``. ``Queries`` keeps what a graph object's queries share: the vocabulary rows
read, whether the ontology-filtered vector indexes serve and which languages the text is
indexed in (each re-read at most once per ``IN_INDEX_RECHECK_SECONDS``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from thalabus_graph.bounds import parse_for_explain, parse_within_limits
from thalabus_graph.datasets import Datasets
from thalabus_graph.embeddings import Embedder
from thalabus_graph.errors import GraphError, PlanError, StaleVocabulary
from thalabus_graph.fragments import Fragment
from thalabus_graph.graph.database import Database
from thalabus_graph.graph.migrations.runner import require_migrated
from thalabus_graph.plan import cost
from thalabus_graph.plan.categories import QueryReads
from thalabus_graph.plan.rewrite import Prepared, prepare, rewrite
from thalabus_graph.plan.steps import InIndexFilter
from thalabus_graph.plan_view import Plan
from thalabus_graph.query import Node, parse, rerank_query, serialize
from thalabus_graph.query.ast import id_form, id_list
from thalabus_graph.query.limits import QueryLimits
from thalabus_graph.query_warning import QueryWarning
from thalabus_graph.request import QueryRequest
from thalabus_graph.rerank import Reranker
from thalabus_graph.rerank.branches import BranchRerank
from thalabus_graph.rerank.outcome import BranchOutcomes
from thalabus_graph.search.documents import DocumentHit, documents_of, log_sources
from thalabus_graph.search.evaluator import Evaluator
from thalabus_graph.search.executor import SearchExecutor
from thalabus_graph.search.languages import GraphLanguages, TextLanguageState
from thalabus_graph.search.scope import InIndexState
from thalabus_graph.search.vector import recovered_by_retry
from thalabus_graph.search.vocabulary import Attempt, PlannedVocabulary, Vocabularies, check_query
from thalabus_graph.settings import Settings

IN_INDEX_RECHECK_SECONDS = 60.0
"""How long the state of the ontology-filtered vector indexes (and the languages of the text
indexes) is trusted before it is read again (``Queries.in_index_filter``)."""


@dataclass(frozen=True)
class QueryResult:
    """What a query returned: fragments (or documents), the dataset ids written, the plan, and
    warnings: category filters or an ontology that match no stored document, a partial
    rerank, and each phrase whose fragments the calibrated scale removed or kept with doubt
    (``scale.DroppedWarning``: kind ``scores``, the phrase, how many fragments dropped, its
    best cosine, the rule)."""

    query: str
    fragments: list[Fragment]
    documents: list[DocumentHit] | None = None
    dataset_ids: list[str] = field(default_factory=list)
    plan: Plan | None = None
    """The executed plan when profiled; a dict that prints as the CLI's tree."""
    warnings: list[QueryWarning] = field(default_factory=list)
    bookmarks: tuple[str, ...] = ()
    """The graph object's bookmarks after the query (its dataset written, when asked): hand
    them to another process's ``ThalabusGraph`` so its reads see this state."""
    rerank: dict[str, Any] | None = None
    """With ``automatically_rerank``: ``BranchOutcomes.flags()`` (``reranked``, ``reason``,
    ``weight_scale``, ``failures``, ``unscored``); a partial or failed rerank is also a
    warning of kind ``rerank``."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``documents`` when documents were asked for, else ``fragments``; ``plan``
        only when profiled; ``rerank`` only when reranking was asked for."""
        out: dict[str, Any] = {"query": self.query, "dataset_ids": self.dataset_ids,
                               "warnings": [w.to_dict() for w in self.warnings],
                               "bookmarks": list(self.bookmarks)}
        if self.rerank is not None:
            out["rerank"] = self.rerank
        if self.documents is not None:
            out["documents"] = [d.to_dict() for d in self.documents]
        else:
            out["fragments"] = [f.to_dict() for f in self.fragments]
        return out if self.plan is None else {**out, "plan": self.plan}


@dataclass(frozen=True)
class _Run:
    """One evaluated query before it is collected: its evaluator, raw fragments, documents
    (when aggregated already), when it started and its vocabulary warnings."""

    evaluator: Evaluator
    fragments: list[Fragment]
    documents: list[DocumentHit] | None
    start: float
    warnings: list[QueryWarning] = field(default_factory=list)


class Queries:
    """The query side of one ``ThalabusGraph``: its executors, evaluators and query runs.

    ``embedder`` and ``reranker`` are read through callables, so the graph object's lazily
    made embedder is loaded only by a search that embeds, and a reranker set on the graph
    object later is the one used.
    """

    def __init__(self, db: Database, settings: Settings, datasets: Datasets, *,
                 embedder: Callable[[], Embedder], reranker: Callable[[], Reranker]) -> None:
        self.db = db
        self.settings = settings
        self.datasets = datasets
        self._embedder = embedder
        self._reranker = reranker
        # Whether the ontology-filtered vector indexes are ONLINE, and when that was read.
        self._in_index = InIndexState(db, settings, IN_INDEX_RECHECK_SECONDS)
        # Which languages the graph's text is indexed in (migration V0009), and when read.
        self._text_languages = TextLanguageState(db, IN_INDEX_RECHECK_SECONDS)
        # The vocabulary rows queries read: a query asking the same again plans with its row
        # and its first statement carries the read (search.vocabulary).
        self.vocabulary = Vocabularies(db, self.scope)

    def forget(self, *, indexes: bool) -> None:
        """Read the text languages again on next use (documents may bring one) and, with
        ``indexes`` (after a migration), the filtered vector indexes' state too."""
        self._text_languages.forget()
        if indexes:
            self._in_index.forget()

    def executor(self, *, ontology_id: str | None = None,
                 subset_of_datasetids: Sequence[str] | None = None, profile: bool = False,
                 document_details: bool = False, exact_details: bool = False,
                 embedder: Embedder | None = None,
                 language: str | None = None, limit: int | None = None,
                 vocabulary: PlannedVocabulary | None = None,
                 datasets_checked: bool = False,
                 stream_limit: int | None = None) -> SearchExecutor:
        """A search executor for one evaluation, with its scope resolved
        (``document_details``: its unfiltered searches also read their documents' details;
        ``exact_details``: its exact searches do, see ``SearchExecutor``;
        ``embedder``: instead of the configured one, which is then not loaded; ``language``:
        the query's language for its text searches, detected per phrase when None; ``limit``:
        the results wanted, which size its pools, ``plan.cost.sized``; ``vocabulary``: the
        query's vocabulary read, carried by its first statement; ``datasets_checked``: the
        caller checks that the parent datasets exist, with the vocabulary read;
        ``stream_limit``: the documents a pure filter query streams at most, see
        ``SearchExecutor``)."""
        ontology_id = id_form(ontology_id)
        subset_of_datasetids = id_list(subset_of_datasetids, "subset_of_datasetids")
        datasetids = (_listed(subset_of_datasetids) if datasets_checked
                      else self.scope(subset_of_datasetids))
        return SearchExecutor(self.db, cost.sized(self.settings, limit),
                              embedder or self._embedder(),
                              ontologyid=ontology_id,
                              datasetids=datasetids,
                              profile=profile, document_details=document_details,
                              exact_details=exact_details,
                              in_index=self.in_index_filter(ontology_id), language=language,
                              text_languages=self._text_languages, vocabulary=vocabulary,
                              stream_limit=stream_limit)

    def in_index_filter(self, ontology_id: str | None) -> InIndexFilter:
        """Whether searches scoped to ``ontology_id`` can use the ontology-filtered vector
        indexes (``search.scope.InIndexState``: read at most once per
        ``IN_INDEX_RECHECK_SECONDS``, never without an ontology)."""
        return self._in_index.state(ontology_id)

    def text_languages(self) -> GraphLanguages:
        """The languages the graph's text is indexed in and whether their indexes serve
        (``search.languages.TextLanguageState``: read at most once per
        ``IN_INDEX_RECHECK_SECONDS``)."""
        return self._text_languages.state()

    def scope(self, subset_of_datasetids: Sequence[str] | None) -> list[str] | None:
        """The parent datasets of the scope, checked to exist (an unknown id is an error; a
        query checks them with its vocabulary read instead, ``_check_datasets``).
        The scope is never materialised: every search checks the ontology (``$ontologyid``)
        and the datasets' membership (``$datasetids``) as Cypher patterns on its hits."""
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
        node = parse_within_limits(query, self.settings)
        evaluator = self.evaluator(ontology_id, subset_of_datasetids, reference=reference,
                                    automatically_rerank=automatically_rerank,
                                    profile=profile, document_details=document_details,
                                    reads=reads, rerank_outcomes=rerank_outcomes,
                                    language=language)
        return evaluator.results(node), evaluator

    def evaluator(self, ontology_id: str | None, subset_of_datasetids: Sequence[str] | None,
                   *, reference: bool = False, automatically_rerank: bool = False,
                   profile: bool = False, document_details: bool = False,
                   reads: QueryReads | None = None,
                   rerank_outcomes: BranchOutcomes | None = None,
                   language: str | None = None, limit: int | None = None,
                   exact_details: bool = False,
                   vocabulary: PlannedVocabulary | None = None,
                   datasets_checked: bool = False,
                   stream_limit: int | None = None) -> Evaluator:
        """The evaluator of one query, its executor's scope resolved and given what the
        vocabulary read returned (``reads``), its pools sized to ``limit``; ``vocabulary``:
        the read its first statement carries, when ``reads`` came from an earlier one;
        ``stream_limit``: see ``executor``."""
        ex = self.executor(ontology_id=ontology_id, subset_of_datasetids=subset_of_datasetids,
                           profile=profile, document_details=document_details,
                           exact_details=exact_details, language=language, limit=limit,
                           vocabulary=vocabulary, datasets_checked=datasets_checked,
                           stream_limit=stream_limit)
        if reads is not None:
            ex.preload(reads.sizes, reads.counts)
        branch = (BranchRerank(self._reranker(), self.settings, rerank_outcomes)
                  if automatically_rerank else None)
        return Evaluator(ex, pushdown=not reference, rerank_branch=branch, record=profile)

    def stream(self, text: str, *, ontology_id: str | None = None,
               subset_of_datasetids: Sequence[str] | None = None) -> Iterator[Fragment]:
        """A query's raw fragments, best first, as an iterator (``Evaluator.stream``: a pure
        filter query's stubs come straight from the driver, in constant memory)."""
        ex = self.executor(ontology_id=ontology_id, subset_of_datasetids=subset_of_datasetids)
        return Evaluator(ex).stream(parse_within_limits(text, self.settings))

    def answer(self, request: QueryRequest) -> QueryResult:
        """``ThalabusGraph.query``'s work: the pipeline, top to bottom."""
        node = parse(request.text, limits=QueryLimits.from_settings(self.settings))
        prepared = prepare(node, self.settings, ontology_id=request.ontology_id,
                           datasetids=request.within, limit=request.limit,
                           grouped=not request.automatically_rerank,
                           strict=request.strict_categories)
        if request.automatically_rerank:  # a branch rerank calls its service mid-evaluation
            run = self._searched(request, prepared)
        else:
            run = self._in_one_read(request, prepared)
        return self._collected(request, node, prepared.limit, run)

    def _in_one_read(self, request: QueryRequest, prepared: Prepared) -> _Run:
        """``_searched`` in one read transaction (``Database.one_read``); a failure the
        searches recover from ends that transaction, so it runs again with a transaction a
        statement, where they do."""
        try:
            return self.db.one_read(lambda: self._searched(request, prepared), what="query")
        except GraphError as exc:
            if not recovered_by_retry(exc):
                raise
            return self._searched(request, prepared)

    def _searched(self, request: QueryRequest, prepared: Prepared) -> _Run:
        """The vocabulary, the evaluation and the documents, from nothing (a retry runs it
        again). Planned with the row a query asking the same read before, its first
        statement carrying the read again; a stale row plans the query again from the fresh
        one (``search.vocabulary``). With a limit the searches read no details: the few
        documents returned are read afterwards, in the same transaction (an exact search
        still does, as its hits are few). A query writing a dataset aggregates once the
        dataset is written."""
        limit = prepared.limit
        attempt = self.vocabulary.first(prepared.check, fresh=request.profile)
        while True:
            start = time.perf_counter()
            evaluator = self._evaluator(request, prepared, attempt)
            try:
                fragments = evaluator.results(prepared.query)
                warnings = self.vocabulary.settle(prepared.check, attempt)
            except StaleVocabulary as stale:
                assert prepared.check is not None
                attempt = self.vocabulary.read(prepared.check, stale.row)
                continue
            documents = (documents_of(self.db, fragments, known=evaluator.executor.details,
                                      limit=limit if request.cut else None)
                         if request.return_documents and not request.create_dataset else None)
            return _Run(evaluator, fragments, documents, start, warnings)

    def _evaluator(self, request: QueryRequest, prepared: Prepared,
                   attempt: Attempt) -> Evaluator:
        """The evaluator of one attempt: its executor in the prepared scope, its pools sized
        to the limit, planned with the attempt's counts."""
        limit = prepared.limit
        ex = SearchExecutor(
            self.db, self.settings, self._embedder(), limit=limit,
            ontologyid=prepared.ontology_id, datasetids=prepared.datasetids,
            profile=request.profile,
            document_details=request.return_documents and limit is None,
            exact_details=request.return_documents, in_index_state=self._in_index,
            language=request.language, text_languages=self._text_languages,
            vocabulary=attempt.planned,
            # a pure filter's stubs come in document-id order, the order the cut keeps
            stream_limit=limit if request.cut and not request.create_dataset else None)
        ex.preload(attempt.reads.sizes, attempt.reads.counts)
        if not request.automatically_rerank:
            return Evaluator(ex, record=request.profile)
        outcomes = BranchOutcomes(semantic=bool(rerank_query(prepared.query.root)))
        return Evaluator(ex, rerank_branch=BranchRerank(self._reranker(), self.settings, outcomes),
                         record=request.profile, outcomes=outcomes)

    def _collected(self, request: QueryRequest, node: Node, limit: int | None,
                   run: _Run) -> QueryResult:
        """The result: the documents, the dataset written from the raw fragments, the
        warnings (vocabulary, calibrated scale, rerank), the cut and the profile."""
        elapsed = (time.perf_counter() - run.start) * 1000
        ex, fragments, documents = run.evaluator.executor, run.fragments, run.documents
        if request.return_documents and documents is None:
            documents = documents_of(self.db, fragments, known=ex.details,
                                     limit=limit if request.cut else None)
        log_sources(fragments)
        outcomes = run.evaluator.outcomes
        flags = None if outcomes is None else outcomes.flags()
        if request.create_dataset or not fragments:
            # an empty answer (or a dataset about to be written) from a database never
            # migrated says so: its searches had no index to fail on, so nothing else would
            require_migrated(self.db, "query")
        dataset_ids: list[str] = []
        if request.create_dataset:  # the canonical text only where it is stored or shown
            dataset_ids.append(self.datasets.create(fragments, session=request.session,
                                                    query=serialize(node), flags=flags))
        warnings = [*run.warnings, *ex.scale.warnings()]
        if outcomes is not None and (line := outcomes.warning()) is not None:
            warnings.append(QueryWarning("rerank", rerank_query(node), None, line))
        if request.cut and limit is not None and documents is None:
            fragments = fragments[:limit]  # documents_of already kept the best `limit`
        plan = None
        if request.profile and run.evaluator.plan is not None:
            plan = Plan(query=serialize(node), ms=round(elapsed, 3),
                        embed_ms=round(ex.embed_ms, 3), fragments=len(fragments),
                        tree=run.evaluator.plan.to_dict(measured=True))
        return QueryResult(request.text, fragments, documents, dataset_ids, plan, warnings,
                           self.db.bookmarks(), flags)

    def explain(self, text: str, *, ontology_id: str | None = None,
                subset_of_datasetids: Sequence[str] | None = None,
                strict_categories: bool = False, language: str | None = None,
                limit: int | None = None) -> dict[str, Any]:
        """The parsed query and the compiled plan as a tree, without running any search:
        category and universe lookups (read transactions) give each filtered semantic search
        its estimated selectivity and chosen path. No query embedding is computed. Category
        warnings are listed as in ``query`` (``strict_categories`` raises them); each text
        search shows its analyzer and the phrase's language (``language`` as in ``query``).
        ``limit`` sizes the pools as ``query`` does; ``pools`` shows them (every ``top_n``
        and the vector index's least ``k``)."""
        from thalabus_graph.plan.explain import explained

        limit = cost.check_limit(limit, self.settings)
        node = parse_for_explain(text, self.settings)
        warnings, reads = check_query(self.db, node, ontology_id,
                                      _listed(subset_of_datasetids), rewrite(node).patterns,
                                      strict=strict_categories)
        ex = self.executor(ontology_id=ontology_id, subset_of_datasetids=subset_of_datasetids,
                           embedder=_NoEmbedder(self._embedder().model_id), language=language,
                           limit=limit, stream_limit=limit)
        ex.preload(reads.sizes, reads.counts)
        return {**explained(ex, node, warnings), "limit": limit,
                "pools": cost.pools(ex.settings)}


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

