"""The searches of one query evaluation: semantic phrases (vector searches fused with their
bag-of-words text search), TEXT terms, category lookups and the universe.

Each search returns fragments on its own score scale (see ``settings``) and may be restricted
to a set of document ids, which is how the compiled plan pushes filters down. The scope is not
a set: every statement checks it as a Cypher pattern on the hit's document (the ontology,
``$ontologyid``, and the parent datasets, ``$datasetids``), and a scope holding every document
is no restriction at all. ``SearchExecutor`` ties the parts together; each part has one job:
``runner`` runs statements and books steps, ``scope`` reads the counts behind the ``Scope``
value, ``vector`` / ``text`` / ``phrase`` search, ``fusing`` fuses, ``lookups`` lists
documents.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from thalabus_graph.errors import GraphError, UnknownCategoryError
from thalabus_graph.fragments import Fragment, sort_fragments
from thalabus_graph.plan.batches import batched
from thalabus_graph.plan.cost import Scope
from thalabus_graph.plan.searches import bag_of_words_plan, phrase_call_steps
from thalabus_graph.plan.steps import (
    CategoryPattern,
    Fusion,
    PhraseCall,
    PhrasePlan,
    Restriction,
    Role,
    Step,
    TextSearch,
    VectorSearch,
)
from thalabus_graph.query_warning import QueryWarning
from thalabus_graph.scoring.scale import (
    sample,
)
from thalabus_graph.search.fusing import Fragments
from thalabus_graph.search.parts import EvaluationParts
from thalabus_graph.search.procedure import eligible, filtered


class SearchExecutor(EvaluationParts):
    """Runs the searches of one query evaluation.

    ``document_details``: every search also returns its hits' documents' details (the query
    returns documents from its whole pool); ``exact_details``: the exact searches do (a query
    returning a few documents: an exact search's hits are few, the restricted documents'
    fragments up to its pool, and their details save the round trip that reads them after);
    ``vocabularies``: the graph object's vocabulary protocol, whose attempt (``vocabulary``,
    read on its own when ``fresh_vocabulary``, planned with ``stale_row`` after a stale one)
    gives the scope's counts when first asked for; ``limit``: the results wanted, which size
    the pools (``plan.cost.sized``); ``in_index_state``: where the ontology-filtered
    indexes' state is read from, instead of ``in_index``; ``stream_limit``: the documents a
    pure filter query's streamed statement returns at most (its first ones by document id,
    the stubs the query's cut keeps), None for every match (a query without a limit, or one
    writing a dataset, which holds every raw fragment).

    Example:
        >>> ex = SearchExecutor(db, settings, embedder)              # doctest: +SKIP
        >>> plan = phrase_plan(ex, PhraseState.of(ex), parse('"asylum"'), None, None)
        ...                                                         # doctest: +SKIP
        >>> ex.run(plan)[:1]                                         # doctest: +SKIP
    """

    # --- what the plan reads ---------------------------------------------------------------
    @property
    def steps(self) -> list[Step]:
        """Where the searches book their steps (the plan node being compiled or run)."""
        return self.runner.steps

    @steps.setter
    def steps(self, steps: list[Step]) -> None:
        self.runner.steps = steps

    @property
    def details(self) -> dict[str, list[Any]]:
        """Documents' details the searches read along with their hits."""
        return self.runner.details

    @property
    def defined(self) -> frozenset[str]:
        """The graph-defined category names the query uses (never pushed as patterns)."""
        return frozenset(self.definitions)

    @property
    def ids(self) -> Restriction | None:
        """The id scope (None: the scope is the patterns, or every document)."""
        return self.reads.value.ids

    @property
    def scope(self) -> Scope:
        """The scope value as known now (nothing is read)."""
        return self.reads.value

    def preload(self, sizes: dict[str, int] | None,
                counts: Mapping[CategoryPattern, int] | None = None) -> None:
        """Take what the query's vocabulary read returned (``ScopeReads.preload``)."""
        self.reads.preload(sizes, counts)

    @contextmanager
    def forgetting(self) -> Iterator[None]:
        """The evaluation inside, whose failure (a statement's ``GraphError``) forgets the
        vocabulary row it was planned with before it propagates, so the next query reads the
        vocabulary afresh (``VocabularyAttempt.forget``)."""
        try:
            yield
        except GraphError:
            if self.vocabulary is not None:
                self.vocabulary.forget()
            raise

    def vocabulary_warnings(self) -> list[QueryWarning]:
        """The warnings of the query's vocabulary, once the evaluation ran
        (``VocabularyAttempt.warnings``; none without an attempt), then those of its
        graph-defined values that selected nothing (``Lookups.defined_warnings``).

        Raises:
            StaleVocabulary: the counts read with the query differ from those planned with.
            UnknownCategoryError: strict, and a defined value selected nothing.
        """
        if self.vocabulary is not None and self.vocabulary.quiet:
            return []
        found = [] if self.vocabulary is None else self.vocabulary.warnings()
        defined = self.lookups.defined_warnings()
        if defined and self.vocabulary is not None and self.vocabulary.strict:
            raise UnknownCategoryError(defined)
        return [*found, *defined]

    def on_procedure(self, plan: PhrasePlan) -> bool:
        """Whether the server's procedure plugin runs this phrase plan: one the plugin can
        run (``procedure.eligible``) in an unscoped query, on a server with this engine's
        plugin (its version read at the first such plan of the connection). An ontology or
        parent datasets known to hold every document restrict nothing (the statements then
        check no pattern either); while their size is unknown, the engine's own call reads
        it."""
        scope = self.scope
        scoped = scope.patterned and (scope.documents is None or scope.counts is None
                                      or scope.scoped())
        return (eligible(plan, scoped or self.ids is not None)
                and self.procedure_phrases is not None)

    def remembered_phrases(self) -> tuple[set[str], set[str], set[str]]:
        """The phrases whose semantic range is remembered, whose unrestricted hits were read
        and whose fusion rule is fitted: what decides the extra searches a phrase adds (the
        plan reads it to list the steps the run will take)."""
        return set(self.fusion.ranges), set(self.fusion.unrestricted), set(self.fusion.fitted)

    @property
    def embed_ms(self) -> float:
        """Milliseconds this evaluation spent embedding its phrases."""
        return self.query_vectors.ms

    def effective(self, restriction: Restriction | None) -> Restriction | None:
        """The restriction a search applies (``Scope.effective``; the counts read when a
        restriction must be compared with the scope's size)."""
        if restriction is None or self.ids is not None:
            return self.reads.value.effective(restriction)
        return self.reads.ready().effective(restriction)

    # --- running a phrase's plan ------------------------------------------------------------
    def run(self, plan: PhrasePlan) -> list[Fragment]:
        """The fragments of a phrase node, its searches run as ``plan.searches.phrase_plan``
        chose them (in order, nothing decided here): a TEXT term's text searches, or a
        phrase's semantic searches fused with its text searches. The searches ``batched``
        groups run in one call a group first, each taking its rows from its call. A phrase
        searched unrestricted alone in an unscoped query runs through the server's procedure
        plugin when it has this engine's (``search.procedure``): the same fragments and
        scores, computed where the data is."""
        if self.on_procedure(plan):
            call = plan.searches[0]
            assert self.procedure_phrases is not None and isinstance(call, PhraseCall)
            steps = phrase_call_steps(self, call.phrase, call.query, procedure=True)
            booked = [self.runner.step(step.pop("kind"), {
                k: v for k, v in step.items() if k not in ("cypher", "if_empty")})
                for step in steps]
            searches = [] if plan.unrestricted else filtered(plan) or []
            return self.procedure_phrases.fragments(
                call.phrase, with_text=call.with_text, steps=booked,
                restricted=[(s, self.runner.step("semantic" if isinstance(s, VectorSearch)
                                                 else "text", dict(s.detail)))
                            for s in searches])
        try:
            for positions in batched(plan):
                self.batch.run(plan, positions)
            return self._run(plan)
        finally:
            self.runner.end_batch()

    def _run(self, plan: PhrasePlan) -> list[Fragment]:
        found: dict[Role, Fragments] = {"results": ([], []), "fit": ([], []),
                                        "range": ([], [])}
        fusion: Fusion | None = None
        for search in plan.searches:
            if isinstance(search, PhraseCall):
                semantic, text = self.phrases.fragments(search.phrase,
                                                        with_text=search.with_text)
                self.scale.check_model(self.embedder.model_id, self.phrases.stored_models)
                # the phrase's unrestricted candidates as the fusion is fitted on them: its
                # fixed sample when the call read one, so no pool sized to a request moves it
                sampled = self.phrases.sampled.get(search.phrase, (semantic, text))
                self.fusion.unrestricted.setdefault(search.phrase, sampled)
                if search.statistics:
                    self._sample(search.phrase, semantic)
                    self.fusion.remember_range(search.phrase, sampled[0])
                    self.scale.remember(search.phrase, semantic, self._sizes(),
                                        self.phrases.beyond.get(search.phrase, ()),
                                        sampled[1], self.fusion.languages)
                if search.results:
                    found["results"][0].extend(semantic)
                    found["results"][1].extend(text)
            elif isinstance(search, VectorSearch):
                found[search.role][0].extend(self.vectors.run(search))
            elif isinstance(search, TextSearch):
                found[search.role][1].extend(self.texts.run(search))
            else:
                fusion = search
        semantic, text = found["results"]
        if not plan.semantic:
            return sort_fragments(text)
        semantic = sort_fragments(semantic)
        if plan.unrestricted:
            self._sample(plan.text, semantic)
        sampled = self.fusion.unrestricted.get(plan.text, (semantic, text))
        if plan.unrestricted and plan.text not in self.fusion.ranges:
            self.fusion.remember_range(plan.text, sampled[0])
        if plan.unrestricted:
            self.scale.remember(plan.text, semantic, self._sizes(),
                                self.phrases.beyond.get(plan.text, ()), sampled[1],
                                self.fusion.languages)
        if any(isinstance(s, VectorSearch) and s.role == "range" for s in plan.searches):
            self.fusion.remember_range(plan.text, found["range"][0])
            self.scale.remember(plan.text, found["range"][0], self._sizes(), (),
                                found["range"][1], self.fusion.languages)
        if fusion is None:
            return self.scale.apply(plan.text, semantic)
        fitting = any(isinstance(s, VectorSearch | TextSearch) and s.role == "fit"
                      for s in plan.searches)
        fit = (sort_fragments(found["fit"][0]), found["fit"][1]) if fitting else None
        if fit is not None:
            self.scale.remember(plan.text, fit[0], self._sizes(), (), fit[1],
                                self.fusion.languages)
        # fused on the index scale, then the phrase's one scale (scale.PhraseScale)
        return self.scale.apply(plan.text, self.fusion.fuse(
            plan.text, semantic, text, restricted=fusion.restricted, fit=fit))

    def _sample(self, phrase: str, semantic: Sequence[Fragment]) -> None:
        """Keep the bottom of the phrase's semantic range from its fixed candidate sample
        (``scale.sample``: its unrestricted fragments and, when the pool is sized to a limit,
        the candidates beyond it), once per phrase."""
        if (self.scale.calibrated and phrase not in self.fusion.lows
                and phrase in self.phrases.beyond):
            drawn = sample(semantic, self.phrases.beyond[phrase])
            if drawn:
                self.fusion.lows[phrase] = min(c.score for c in drawn)

    def _sizes(self) -> dict[str, int]:
        """Fragments per source in the graph, for a phrase's background (empty while
        unknown: the background then counts its candidates)."""
        return dict(self.reads.value.counts or {})

    def prefetch_phrases(self, calls: Sequence[tuple[str, str, bool]]) -> None:
        """Start several unfiltered phrases' calls at once (``evaluator.phrase_calls``:
        (statement, phrase, with text)): their ``search_phrase`` calls
        (``PhraseSearches.prefetch``) and their ``search_phrase_procedure`` calls on the
        procedure plugin (``ProcedurePhrases.prefetch``), each kind when two or more."""
        python = [(p, t) for name, p, t in calls if name == "search_phrase"]
        procedure = [(p, t) for name, p, t in calls if name == "search_phrase_procedure"]
        self.phrases.prefetch(python)
        if len(set(procedure)) > 1 and self.procedure_phrases is not None:
            self.procedure_phrases.prefetch(procedure)

    # --- lookups ---------------------------------------------------------------------------
    def category_count(self, category: CategoryPattern) -> int:
        """Documents of the scope having the pushed pattern (``ScopeReads.count``)."""
        return self.reads.count(category).pattern_counts[category]

    def pair_documents(self, pairs: Sequence[tuple[str, str]]
                       ) -> dict[tuple[str, str], Restriction]:
        """Many categories' documents in one round trip (``Lookups.pair_documents``)."""
        return self.lookups.pair_documents(pairs)

    def document_categories(self, documentids: Iterable[str]
                            ) -> dict[tuple[str, str], set[str]]:
        """The categories of a few documents (``Lookups.document_categories``)."""
        return self.lookups.document_categories(documentids)

    def universe(self) -> Restriction:
        """Every document of the scope (``Lookups.universe``)."""
        return self.lookups.universe()


def bag_of_words(ex: SearchExecutor, phrase: str) -> list[Fragment]:
    """The bag-of-words full-text search a SEMANTIC phrase fuses in, run on its own
    (``plan.searches.bag_of_words_plan``)."""
    return ex.run(bag_of_words_plan(ex, phrase))
