"""``ThalabusGraph``: the entry point that ties parsing, searches, datasets and reranking.

The object holds a driver and configuration only; no state is kept between calls, so any
number of workers can share one Neo4j (or a cluster, through ``neo4j://`` routing URIs).
"""

from __future__ import annotations

import logging
import os
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from thalabus_graph.datasets import Datasets, Member
from thalabus_graph.documents import SourceDocument
from thalabus_graph.embeddings import Embedder, embedder_from_settings
from thalabus_graph.errors import PlanError, UnknownCategoryError
from thalabus_graph.fragments import Fragment, aggregate_documents, rag_select
from thalabus_graph.goals import GoalContext, Goals
from thalabus_graph.graph.connection import Connection
from thalabus_graph.graph.database import Database
from thalabus_graph.ingest import Ingestor, IngestReport
from thalabus_graph.plan.categories import QueryReads, QueryWarning, check_query
from thalabus_graph.plan.compile import pushed_patterns
from thalabus_graph.plan.evaluator import Evaluator
from thalabus_graph.query import Node, parse, rerank_query, serialize
from thalabus_graph.rerank import (
    NoReranking,
    Reranker,
    ScoredFragment,
    SelectionPolicy,
    ThresholdWithTiers,
    reranker_from_settings,
)
from thalabus_graph.rerank.policies import ranked
from thalabus_graph.rerank.rounds import rerank_fragments, rerank_in_rounds_sync
from thalabus_graph.search import (
    IN_INDEX_UNKNOWN,
    VECTOR_SOURCES,
    InIndexFilter,
    SearchExecutor,
)
from thalabus_graph.settings import Settings

if TYPE_CHECKING:
    from thalabus_graph.graph.migrations import MigrationReport

DEFAULT_SESSION = "default"
IN_INDEX_RECHECK_SECONDS = 60.0
"""How long the state of the ontology-filtered vector indexes is trusted before it is read
again (``ThalabusGraph.in_index_filter``)."""
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DocumentHit:
    """A document-level result: its best fragment score and its details."""

    documentid: str
    score: float
    title: str | None
    ontology: str | None
    properties: dict[str, Any]
    categories: dict[str, list[str]]
    fragments: list[Fragment]

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"documentid": self.documentid, "score": self.score, "title": self.title,
                "ontology": self.ontology, "properties": self.properties,
                "categories": self.categories,
                "fragments": [f.to_dict() for f in self.fragments]}


@dataclass(frozen=True)
class QueryResult:
    """What a query returned: fragments (or documents), the dataset ids written, the plan, and
    warnings about category filters or an ontology that match no stored document."""

    query: str
    fragments: list[Fragment]
    documents: list[DocumentHit] | None = None
    dataset_ids: list[str] = field(default_factory=list)
    plan: dict[str, Any] | None = None
    warnings: list[QueryWarning] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``documents`` when documents were asked for, else ``fragments``; ``plan``
        only when profiled."""
        out: dict[str, Any] = {"query": self.query, "dataset_ids": self.dataset_ids,
                               "warnings": [w.to_dict() for w in self.warnings]}
        if self.documents is not None:
            out["documents"] = [d.to_dict() for d in self.documents]
        else:
            out["fragments"] = [f.to_dict() for f in self.fragments]
        return out if self.plan is None else {**out, "plan": self.plan}


@dataclass(frozen=True)
class RerankResult:
    """A reranked dataset: its id, the surviving members and whether the order was computed."""

    dataset_id: str
    """The new dataset, ``{session}#rerank_{n}``, ``DERIVED_FROM`` ``parent_id``."""
    parent_id: str
    query: str
    """What the reranker was asked: the positive semantic clauses joined by " AND "."""
    fragments: list[ScoredFragment]
    """The members written, best first (scored ones, then unscored in retrieved order)."""
    reranked: bool
    reason: str | None
    """Why the order was kept or partly kept (`RoundsResult.reason`); None when complete."""
    rounds: int
    failures: int
    """Failed scoring batches over all rounds."""
    weight_scale: str = "reranker"
    """``reranker``, ``retrieval`` (order kept) or ``mixed`` (partly failed)."""
    unscored: int = 0
    capped: int = 0
    """Selected fragments the ``MAX_RERANKING_OUTPUT_FRAG`` cap removed."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"dataset_id": self.dataset_id, "parent_id": self.parent_id,
                "query": self.query, "reranked": self.reranked, "reason": self.reason,
                "rounds": self.rounds, "failures": self.failures,
                "weight_scale": self.weight_scale, "unscored": self.unscored,
                "capped": self.capped, "fragments": [f.to_dict() for f in self.fragments]}


class ThalabusGraph:
    """The retrieval engine over one Neo4j database.

    Example:
        >>> g = ThalabusGraph.connect("bolt://127.0.0.1:7687")      # doctest: +SKIP
        >>> g.migrate(); g.ingest("corpus.jsonl")                    # doctest: +SKIP
        >>> g.query('"asylum seeker" AND COUNTRY_OF_ORIGIN=IQ').documents  # doctest: +SKIP
    """

    def __init__(self, db: Database, *, settings: Settings | None = None,
                 embedder: Embedder | None = None, reranker: Reranker | None = None) -> None:
        self.db = db
        self.owns_database = False
        self.settings = settings or Settings.from_env()
        self._embedder = embedder
        self.reranker: Reranker = reranker or reranker_from_settings(self.settings)
        self.datasets = Datasets(db, self.settings)
        self.goals = Goals(db, self.settings, self.datasets)
        # Whether the ontology-filtered vector indexes are ONLINE, and when that was read.
        self._in_index: tuple[float, InIndexFilter] | None = None

    @classmethod
    def connect(cls, uri: str | None = None, *, auth: tuple[str, str] | None = None,
                database: str | None = None, settings: Settings | None = None,
                embedder: Embedder | None = None,
                reranker: Reranker | None = None) -> ThalabusGraph:
        """Connect to Neo4j (``bolt://`` or routing ``neo4j://``); the embedder loads lazily.

        What is not given comes from ``NEO4J_URI``, ``NEO4J_USERNAME``, ``NEO4J_PASSWORD`` and
        ``NEO4J_DATABASE`` (see ``thalabus_graph.graph.connection``), as for the CLI.
        """
        target = Connection.resolve(uri, database=database)
        db = Database.connect(target.uri, auth=auth if auth is not None else target.auth,
                              database=target.database)
        graph = cls(db, settings=settings, embedder=embedder, reranker=reranker)
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
    def embedder(self) -> Embedder:
        """The configured embedder (local e5 unless ``embedder_url`` is set), made on first use."""
        if self._embedder is None:
            self._embedder = embedder_from_settings(self.settings)
        return self._embedder

    # --- schema and ingestion ------------------------------------------------------------
    def migrate(self) -> MigrationReport:
        """Apply pending migrations; returns the migration report."""
        from thalabus_graph.graph.migrations import MigrationRunner

        report = MigrationRunner(self.db, self.settings).migrate()
        self._in_index = None  # the migration may have built the filtered indexes
        return report

    def ingest(self, documents: str | os.PathLike[str] | Iterable[SourceDocument | dict[str, Any]],
               *, strict: bool = False, progress: bool | None = None,
               embed: bool = True) -> IngestReport:
        """Ingest JSON Lines (a path) or documents; see ``thalabus_graph.ingest``.

        ``embed=False`` ingests only supplied embeddings (no model is loaded).
        """
        embedder = self.embedder if embed else None
        return Ingestor(self.db, self.settings, embedder).ingest(
            documents, strict=strict, progress=progress)

    # --- querying ------------------------------------------------------------------------
    def executor(self, *, ontology_id: str | None = None,
                 subset_of_datasetids: Sequence[str] | None = None,
                 profile: bool = False, document_details: bool = False) -> SearchExecutor:
        """A search executor for one evaluation, with its scope resolved
        (``document_details``: its unfiltered searches also read their documents' details)."""
        return SearchExecutor(self.db, self.settings, self.embedder, ontologyid=ontology_id,
                              datasetids=self._scope(subset_of_datasetids),
                              profile=profile, document_details=document_details,
                              in_index=self.in_index_filter(ontology_id))

    def in_index_filter(self, ontology_id: str | None) -> InIndexFilter:
        """Whether searches scoped to ``ontology_id`` can use the ontology-filtered vector
        indexes (migration V0007, Neo4j 2026.01+): all three ONLINE and the setting
        ``vector_in_index_filter`` on. Read at most once per ``IN_INDEX_RECHECK_SECONDS`` (an
        index dropped or built meanwhile is seen at the next read); not read without an
        ontology, which never uses them."""
        if ontology_id is None:
            return IN_INDEX_UNKNOWN
        if not self.settings.vector_in_index_filter:
            return InIndexFilter(False, "switched off (vector_in_index_filter)")
        now = time.monotonic()
        if self._in_index is None or now - self._in_index[0] > IN_INDEX_RECHECK_SECONDS:
            names = [src.filtered_index for src in VECTOR_SOURCES]
            online = {r["name"] for r in self.db.read("search_filtered_indexes", names=names)}
            missing = [name for name in names if name not in online]
            state = (InIndexFilter(True) if not missing else InIndexFilter(
                False, f"{', '.join(missing)} not ONLINE (migration V0007 builds them on "
                "Neo4j 2026.01 or newer)"))
            self._in_index = (now, state)
        return self._in_index[1]

    def _scope(self, subset_of_datasetids: Sequence[str] | None) -> list[str] | None:
        """The parent datasets of the scope, checked to exist (an unknown id is an error).
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
                 document_details: bool = False, reads: QueryReads | None = None
                 ) -> tuple[list[Fragment], Evaluator]:
        """Raw fragments of a query (compiled plan, or the reference evaluator) and the
        evaluator, which holds the executed plan tree when ``profile`` is set
        (``document_details``: see ``executor``; ``reads``: the node counts, scope size and
        pattern counts already read with the query's vocabulary, ``check_query``)."""
        node = parse(query) if isinstance(query, str) else query
        ex = self.executor(ontology_id=ontology_id, subset_of_datasetids=subset_of_datasetids,
                           profile=profile, document_details=document_details)
        if reads is not None:
            ex.preload(reads.sizes, reads.counts)
        branch = self._rerank_branch if automatically_rerank else None
        evaluator = Evaluator(ex, pushdown=not reference, rerank_branch=branch, record=profile)
        return evaluator.evaluate(node), evaluator

    def stream(self, text: str, *, ontology_id: str | None = None,
               subset_of_datasetids: Sequence[str] | None = None) -> Iterator[Fragment]:
        """A query's raw fragments, best first, as an iterator. A pure filter query (only
        categories under AND / OR / NOT) runs as one statement whose stubs come straight from
        the driver's result, in constant memory however many documents match
        (``datasets.create`` writes such an iterator in pages); any other query is evaluated
        first, as ``evaluate``."""
        ex = self.executor(ontology_id=ontology_id, subset_of_datasetids=subset_of_datasetids)
        return Evaluator(ex).stream(parse(text))

    def query(self, text: str, *, ontology_id: str | None = None,
              subset_of_datasetids: Sequence[str] | None = None, return_documents: bool = True,
              create_dataset: bool = False, automatically_rerank: bool = False,
              session: str = DEFAULT_SESSION, profile: bool = False,
              strict_categories: bool = False) -> QueryResult:
        """Run a Thalabus query.

        The dataset (when asked) is written from the raw fragments before any aggregation.
        ``return_documents`` aggregates to documents (best fragment score each, with details);
        ``profile`` attaches the executed plan (steps, rows, milliseconds). Category names,
        values and the ontology that no stored document has are reported in ``warnings``
        (with a "did you mean" when only the letter case differs); ``strict_categories``
        raises ``UnknownCategoryError`` instead, before anything runs.
        """
        node = parse(text)
        warnings, reads = self._check_categories(node, ontology_id, strict_categories,
                                                 subset_of_datasetids)
        start = time.perf_counter()
        fragments, evaluator = self.evaluate(node, ontology_id=ontology_id,
                                             subset_of_datasetids=subset_of_datasetids,
                                             automatically_rerank=automatically_rerank,
                                             profile=profile, document_details=return_documents,
                                             reads=reads)
        elapsed = (time.perf_counter() - start) * 1000
        dataset_ids: list[str] = []
        if create_dataset:
            dataset_ids.append(self.datasets.create(fragments, session=session,
                                                    query=serialize(node)))
        _log_sources(fragments)
        documents = (self.documents_of(fragments, known=evaluator.executor.details)
                     if return_documents else None)
        plan = None
        if profile and evaluator.plan is not None:
            plan = {"query": serialize(node), "ms": round(elapsed, 3),
                    "embed_ms": round(evaluator.executor.embed_ms, 3),
                    "fragments": len(fragments),
                    "tree": evaluator.plan.to_dict(measured=True)}
        return QueryResult(text, fragments, documents, dataset_ids, plan, warnings)

    def _check_categories(self, node: Node, ontology_id: str | None, strict: bool,
                          subset_of_datasetids: Sequence[str] | None = None
                          ) -> tuple[list[QueryWarning], QueryReads]:
        """The query's category and ontology warnings (raised as an error when ``strict``),
        and the node counts, scope size and the counts of the patterns the plan pushes, read
        in the same round trip (``check_query``)."""
        warnings, reads = check_query(self.db, node, ontology_id,
                                      None if subset_of_datasetids is None
                                      else list(subset_of_datasetids), pushed_patterns(node))
        if strict and warnings:
            raise UnknownCategoryError(warnings)
        return warnings, reads

    def explain(self, text: str, *, ontology_id: str | None = None,
                subset_of_datasetids: Sequence[str] | None = None,
                strict_categories: bool = False) -> dict[str, Any]:
        """The parsed query and the compiled plan as a tree, without running any search:
        category and universe lookups (read transactions) give each filtered semantic search
        its estimated selectivity and chosen path. No query embedding is computed. Category
        warnings are listed as in ``query`` (``strict_categories`` raises them); ``scores``
        says which scale semantic scores are on (``scale.PhraseScale.explain``)."""
        from thalabus_graph.plan.explain import Explainer

        node = parse(text)
        warnings, reads = self._check_categories(node, ontology_id, strict_categories,
                                                 subset_of_datasetids)
        ex = SearchExecutor(self.db, self.settings, _NO_EMBEDDER, ontologyid=ontology_id,
                            datasetids=self._scope(subset_of_datasetids),
                            in_index=self.in_index_filter(ontology_id))
        ex.preload(reads.sizes, reads.counts)
        tree = Explainer(ex).explain(node)
        return {"query": serialize(node), "ast": node.to_dict(),
                "plan": tree.to_dict(measured=False), "scores": ex.scale.explain(),
                "warnings": [w.to_dict() for w in warnings]}

    def documents_of(self, fragments: Sequence[Fragment], *,
                     known: Mapping[str, Sequence[Any]] | None = None) -> list[DocumentHit]:
        """Aggregate fragments to documents: best score each, details attached, best first.

        ``known``: details the searches already read (documentid -> [documentid, properties,
        ontologyid, categories], as ``document_details`` returns them; ``query`` passes its
        executor's); only the documents missing there are read, in one statement.
        """
        ranked = aggregate_documents(fragments)
        if not ranked:
            return []
        details: dict[str, Sequence[Any]] = dict(known or {})
        missing = [d for d, _ in ranked if d not in details]
        if missing:
            rows = self.db.read_plain("document_details", documentids=missing)
            details.update((d[0], d) for d in (rows[0]["documents"] if rows else []))
        by_doc: dict[str, list[Fragment]] = {}
        for f in fragments:
            by_doc.setdefault(f.documentid, []).append(f)
        out: list[DocumentHit] = []
        for documentid, score in ranked:
            _, props, ontology, categories = (details.get(documentid)
                                              or (documentid, None, None, None))
            cats: dict[str, list[str]] = {}
            for c in categories or ():
                if c.get("name") is not None:
                    cats.setdefault(c["name"], []).append(c["value"])
            props = dict(props or {})
            out.append(DocumentHit(documentid, score, props.get("title"), ontology, props,
                                   {k: sorted(set(v)) for k, v in cats.items()},
                                   by_doc.get(documentid, [])))
        return out

    def rag_fragments(self, text: str, *, ontology_id: str | None = None,
                      subset_of_datasetids: Sequence[str] | None = None,
                      create_dataset: bool = False, session: str = DEFAULT_SESSION,
                      strict_categories: bool = False) -> QueryResult:
        """The fast path: raw fragments filtered by ``MIN_RERANKING_SCORE_DOC``, capped at
        ``MAX_FRAGMENTS_PER_DOC`` per document, sorted, cut to ``MAX_RAG_OUTPUT_FRAG``
        (category warnings as in ``query``).

        ``create_dataset`` stores what the fast path returned (the selection, not the raw
        fragments), so the dataset is the result that is "preserved and forwarded"."""
        result = self.query(text, ontology_id=ontology_id,
                            subset_of_datasetids=subset_of_datasetids, return_documents=False,
                            strict_categories=strict_categories)
        s = self.settings
        picked = rag_select(result.fragments, min_score=s.min_reranking_score_doc,
                            max_per_doc=s.max_fragments_per_doc, max_total=s.max_rag_output_frag)
        dataset_ids: list[str] = []
        if create_dataset:
            dataset_ids.append(self.datasets.create(picked, session=session,
                                                    query=serialize(parse(text))))
        return QueryResult(text, picked, None, dataset_ids, warnings=result.warnings)

    # --- reranking -----------------------------------------------------------------------
    def _rerank_branch(self, node: Node, fragments: list[Fragment]) -> list[Fragment]:
        """Branch-level reranking: the branch's semantic clauses score its fragments.

        One scale per branch: when the reranker scored any fragment of the branch, every
        fragment it did not score (a category stub, a failed batch, an id missing from the
        reply) takes the branch's lowest reranker score, so it ranks after every scored
        fragment and AND/OR never compare a retrieval score with a reranker score. When
        nothing was scored (no semantic clause, a failure), the branch keeps its retrieval
        scores whole.
        """
        query = rerank_query(node)
        if not query:
            return fragments
        scorable = [f for f in fragments if f.text]
        result = rerank_fragments([(f.fragmentid, f.text or "", f.score) for f in scorable],
                                  query, self.reranker, _KeepAll(),
                                  round_size=self.settings.max_reranking_input_frag)
        if not result.reranked:
            logger.info("branch %s: not reranked (%s); retrieval scores kept", query,
                        result.reason)
            return fragments
        scores = {f.fragmentid: f.score for f in result.fragments[: result.scored]}
        if not scores:
            return fragments
        floor = min(scores.values())
        unscored = sum(1 for f in fragments if f.fragmentid not in scores)
        if unscored:
            logger.info("branch %s: %d of %d fragments unscored take the branch's lowest "
                        "reranker score %.6g", query, unscored, len(fragments), floor)
        return [f.with_score(scores.get(f.fragmentid, floor)) for f in fragments]

    def rerank_dataset(self, dataset_id: str, query_text: str | None = None, *,
                       session: str | None = None, policy: SelectionPolicy | None = None,
                       max_output: int | None = None, goal: str | None = None) -> RerankResult:
        """Rerank a dataset's members in rounds and write ``{session}#rerank_{n}``.

        The rerank query is the positive semantic clauses of ``query_text`` (default: the
        query the dataset was made from, ``DatasetInfo.stored_query``, so a rerank reranks
        again without one) joined by " AND "; with none, the order is kept and the result
        says so. The new dataset stores that text as ``query`` and the query it came from as
        ``source_query``. With ``goal``, the goal uses the new dataset (linked in the same
        transaction, in its parent's place when the goal used the parent). Members are read
        one round at a time. The merged rounds are capped at ``max_output`` (default
        ``MAX_RERANKING_OUTPUT_FRAG``, or the policy's own ``max_output_frag``), the tiers'
        document coverage kept.

        The new Dataset node records how its weights came about: ``reranked``, ``reason``
        (``no-semantic-query`` | ``no-reranker`` | ``failed`` | ``empty`` | ``partial``),
        ``failures``, ``unscored``, ``capped`` and ``weight_scale`` (``reranker`` |
        ``retrieval`` | ``mixed``). A partly failed rerank keeps the unscored members after
        the scored ones, in their retrieved order, with their retrieval weights.

        Raises:
            ConfigurationError: raised by the reranker (never written as a degraded dataset).
        """
        info = self.datasets.get(dataset_id)
        node = parse(info.stored_query() if query_text is None else query_text)
        rerank_text = rerank_query(node)
        no_reranker = isinstance(self.reranker, NoReranking)
        s = self.settings
        stubs: set[str] = set()  # filled while the rounds are read, one page at a time

        def rounds() -> Iterator[list[tuple[str, str, float]]]:
            for page in self.datasets.pages(dataset_id, page_size=s.max_reranking_input_frag):
                stubs.update(m.fragmentid for m in page if m.source == "category")
                yield [(m.fragmentid, m.rerank_text or m.text or "", m.score) for m in page]

        chosen = policy or ThresholdWithTiers.from_settings(s)
        cap = max_output or getattr(chosen, "max_output_frag", s.max_reranking_output_frag)
        min_docs = getattr(chosen, "min_output_doc", s.min_reranking_output_doc)
        result = rerank_in_rounds_sync(rounds(), "" if no_reranker else rerank_text,
                                       self.reranker, chosen, max_output=cap,
                                       min_output_doc=min_docs)
        reason = "no-reranker" if no_reranker and rerank_text else result.reason
        if not result.reranked:
            scale = "retrieval"
        else:
            scale = "mixed" if result.unscored_ids else "reranker"
        unscored = set(result.unscored_ids)
        members = [Member(f.fragmentid, f.fragmentid if f.fragmentid in stubs else f.documentid,
                          f.text, f.score, "category" if f.fragmentid in stubs else "fragment",
                          original_score=f.original_score,
                          unscored=result.reranked and f.fragmentid in unscored)
                   for f in result.fragments]
        flags: dict[str, Any] = {"reranked": result.reranked, "reason": reason,
                 "failures": len(result.failures), "weight_scale": scale,
                 "unscored": len(unscored) if result.reranked else 0, "capped": result.capped,
                 "source_query": serialize(node)}
        new_id = self.datasets.create(members, session=session or info.session,
                                      query=rerank_text, kind="rerank",
                                      derived_from=dataset_id, flags=flags, goal=goal)
        log = logger.info if result.reranked and reason is None else logger.warning
        log("rerank %s -> %s: %d of %d members kept, reranked=%s, reason=%s, failures=%d, "
            "scale=%s", dataset_id, new_id, len(members), info.members, result.reranked,
            reason, len(result.failures), scale)
        return RerankResult(new_id, dataset_id, rerank_text, list(result.fragments),
                            result.reranked, reason, result.rounds, len(result.failures), scale,
                            int(flags["unscored"]), result.capped)

    def goal_context(self, goalid: str, **kwargs: Any) -> GoalContext:
        """The goal's RAG context and message (see ``goals.Goals.context``)."""
        return self.goals.context(goalid, **kwargs)


def _log_sources(fragments: Sequence[Fragment]) -> None:
    """One INFO line per fragment source kind of a query's result (how many, best score)."""
    if not logger.isEnabledFor(logging.INFO):
        return
    counts = Counter(f.source for f in fragments)
    for source in sorted(counts):
        best = max(f.score for f in fragments if f.source == source)
        logger.info("query: %d %s fragments (best score %.4f)", counts[source], source, best)


class _NoEmbedder:
    """Stands in for the embedder where nothing may be embedded (explain)."""

    dimensions = 0
    model_id = "none"

    def embed_queries(self, texts: Sequence[str]) -> Any:
        raise PlanError("explain does not embed queries")

    embed_passages = embed_queries


_NO_EMBEDDER: Any = _NoEmbedder()


class _KeepAll:
    """Selection policy that keeps every scored fragment (branch reranking rescores only)."""

    def select(self, scored: Sequence[ScoredFragment]) -> list[ScoredFragment]:
        return ranked(scored)

