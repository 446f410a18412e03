"""One evaluation's searches and the state they share, each made on first use
(``EvaluationParts``): a query that never embeds never loads the embedder's vectors, and a
pure filter makes no phrase search. ``search.executor.SearchExecutor`` is these parts with
what the plan asks of them and the phrase runs.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any

from thalabus_graph.embeddings import Embedder
from thalabus_graph.graph.category_definitions import CategoryDefinition
from thalabus_graph.graph.database import Database
from thalabus_graph.plan.cost import sized
from thalabus_graph.plan.rewrite import Prepared
from thalabus_graph.plan.steps import IN_INDEX_UNKNOWN, InIndexFilter, Restriction
from thalabus_graph.scoring.scale import (
    BACKGROUND_TOP_N,
    PhraseScale,
    calibration_of,
    settings_for,
)
from thalabus_graph.search.batch import PhraseBatch
from thalabus_graph.search.fusing import PhraseFusion
from thalabus_graph.search.languages import TextLanguages, TextLanguageState
from thalabus_graph.search.lookups import Lookups
from thalabus_graph.search.phrase import PhraseSearches
from thalabus_graph.search.procedure import ProcedurePhrases, ProcedureState
from thalabus_graph.search.runner import Runner
from thalabus_graph.search.scope import InIndexState, ScopeReads
from thalabus_graph.search.text import TextSearches
from thalabus_graph.search.vector import VectorSearches
from thalabus_graph.search.vocabulary import Vocabularies, VocabularyAttempt
from thalabus_graph.settings import Settings


class QueryVectors:
    """The query embeddings of one evaluation: each phrase embedded once (the embedder caches
    too), and the milliseconds spent embedding."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.ms = 0.0
        self._vectors: dict[str, list[float]] = {}

    def __call__(self, phrase: str) -> list[float]:
        if phrase not in self._vectors:
            start = time.perf_counter()
            vec = self.embedder.embed_queries([phrase])[0]
            self.ms += (time.perf_counter() - start) * 1000
            self._vectors[phrase] = [float(x) for x in vec]
        return self._vectors[phrase]


class EvaluationParts:
    """The parts of one evaluation (the arguments are ``SearchExecutor``'s)."""

    def __init__(self, db: Database, settings: Settings, embedder: Embedder,
                 ids: Restriction | None = None, *, ontologyid: str | None = None,
                 datasetids: Sequence[str] | None = None,
                 profile: bool = False, document_details: bool = False,
                 exact_details: bool = False,
                 in_index: InIndexFilter = IN_INDEX_UNKNOWN, language: str | None = None,
                 text_languages: TextLanguageState | None = None,
                 vocabularies: Vocabularies | None = None, fresh_vocabulary: bool = False,
                 stale_row: Mapping[str, Any] | None = None,
                 stream_limit: int | None = None, limit: int | None = None,
                 in_index_state: InIndexState | None = None,
                 definitions: Mapping[str, CategoryDefinition] | None = None,
                 procedures: ProcedureState | None = None) -> None:
        # the calibration follows the embedder's model, not EMBEDDER_MODEL (scale.settings_for)
        self._given = settings
        self._limit = limit
        self._in_index_state = in_index_state
        self._db = db
        self.stream_limit = stream_limit
        self.embedder = embedder
        self.document_details = document_details
        self._exact_details = document_details or exact_details
        self._profile = profile
        self._vocabularies = (vocabularies, fresh_vocabulary, stale_row)
        self._scope = (ontologyid, datasetids, ids, in_index)
        self.prepared: Prepared | None = None
        """The query as prepared for this evaluation (``plan.rewrite.prepare``), set before
        it is compiled: its scope and vocabulary check replace the arguments'."""
        self._languages = (text_languages, language)
        self._definitions = None if definitions is None else dict(definitions)
        self._procedures = procedures

    # The parts of one evaluation, each made on first use (a query that never embeds never
    # loads the embedder's vectors, a pure filter makes no phrase search).
    @cached_property
    def settings(self) -> Settings:
        """The evaluation's settings: the pools sized to its limit (``plan.cost.sized``),
        calibrated for the embedder's model."""
        return settings_for(sized(self._given, self._limit), self.embedder.model_id)

    @cached_property
    def vocabulary(self) -> VocabularyAttempt | None:
        """The evaluation's side of the vocabulary protocol (None without one): its counts
        are the scope's, and its read rides on the first statement when the plan is made
        with a row seen before (``search.vocabulary``)."""
        vocabularies, fresh, stale_row = self._vocabularies
        if vocabularies is None:
            return None
        check = None if self.prepared is None else self.prepared.check
        return VocabularyAttempt(vocabularies, check, fresh=fresh, row=stale_row)

    @cached_property
    def runner(self) -> Runner:
        """Runs every statement of the evaluation and books its steps."""
        planned = None if self.vocabulary is None else self.vocabulary.attempt.planned
        return Runner(self._db, profile=self._profile, vocabulary=planned,
                      text_cap=self.settings.max_result_text_chars)

    @cached_property
    def reads(self) -> ScopeReads:
        """The scope and the counts behind it."""
        ontologyid, datasetids, ids, in_index = self._scope
        if self.prepared is not None:
            ontologyid, datasetids = self.prepared.ontology_id, self.prepared.datasetids
        if self._in_index_state is not None:
            in_index = self._in_index_state.state(ontologyid)
        reads = ScopeReads(self.runner, ontologyid=ontologyid, datasetids=datasetids,
                           ids=ids, in_index=in_index)
        if self.vocabulary is not None:  # the counts the vocabulary read brought
            known = self.vocabulary.attempt.reads
            reads.preload(known.sizes, known.counts)
        return reads

    @cached_property
    def text_language(self) -> TextLanguages:
        """The phrase language chooser."""
        text_languages, language = self._languages
        return TextLanguages(self.settings, text_languages, language)

    @cached_property
    def query_vectors(self) -> QueryVectors:
        """The phrases' embeddings. A callable object, not a bound method: the searches hold
        it, and a reference back to this executor would make every evaluation cyclic
        garbage (its hits and details then wait for the cycle collector)."""
        return QueryVectors(self.embedder)

    @cached_property
    def vectors(self) -> VectorSearches:
        """The vector searches."""
        return VectorSearches(self.runner, self.reads, self.settings, self.query_vectors,
                              details=self.document_details, exact_details=self._exact_details)

    @cached_property
    def texts(self) -> TextSearches:
        """The full-text searches."""
        return TextSearches(self.runner, self.reads, self.settings,
                            details=self.document_details)

    @cached_property
    def scale(self) -> PhraseScale:
        """The calibrated scale of the evaluation's phrases."""
        return PhraseScale(self.settings, calibration_of(self.settings),
                           self.text_language.held)

    @cached_property
    def fusion(self) -> PhraseFusion:
        """The phrases' fusion, on the scale semantic scores are on."""
        fusion = PhraseFusion(self.runner, self.settings)
        fusion.semantic_scale = self.scale.calibrated
        return fusion

    @cached_property
    def phrases(self) -> PhraseSearches:
        """The unfiltered phrases' one-call searches."""
        return PhraseSearches(self.runner, self.reads, self.settings, self.query_vectors,
                              details=self.document_details, best=self.texts.best,
                              languages=self.fusion.languages,
                              text_language=self.text_language.choose,
                              background=(BACKGROUND_TOP_N if self.scale.calibrated
                                          or self.settings.fusion == "language-slots"
                                          else 0))

    @cached_property
    def procedure_phrases(self) -> ProcedurePhrases | None:
        """The phrases the server's procedure plugin runs (None: it runs none, for want of
        the plugin, by the ``procedures`` setting, or for a calibration it cannot read)."""
        if self._procedures is None or not self._procedures.available():
            return None
        found = ProcedurePhrases(self.runner, self.reads, self.settings, self.query_vectors,
                                 self.text_language, self.scale, self.embedder.model_id,
                                 details=(0 if not self._exact_details
                                          else -1 if self._limit is None else self._limit))
        return found if found.usable() else None

    @cached_property
    def batch(self) -> PhraseBatch:
        """A restricted phrase's searches in one call."""
        return PhraseBatch(self.runner, self.reads, self.settings, self.query_vectors,
                           self.phrases, details=self.document_details,
                           exact_details=self._exact_details)

    @property
    def definitions(self) -> dict[str, CategoryDefinition]:
        """The graph-defined categories the query uses, by name: as given, else as the
        query's vocabulary read returned them (deciding its attempt, as the plan's first
        count would)."""
        if self._definitions is None:
            reads = None if self.vocabulary is None else self.vocabulary.attempt.reads
            self._definitions = {name: CategoryDefinition(name, pattern) for name, pattern
                                 in (reads.definitions if reads is not None else {}).items()}
        return self._definitions

    @definitions.setter
    def definitions(self, definitions: dict[str, CategoryDefinition]) -> None:
        self._definitions = dict(definitions)

    @cached_property
    def lookups(self) -> Lookups:
        """Document lookups (categories, the universe)."""
        return Lookups(self.runner, self.reads, self.definitions)

