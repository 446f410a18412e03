"""What the compiler asks of the graph, as a protocol the reading layer implements.

The plan never reads the graph itself: each decision (a search's path and ``k``, the
documents of a category, a NOT's universe) asks a ``Statistics`` object for the counts behind
it, and the reading layer (``search.executor.SearchExecutor``) answers, reading each count at
most once per evaluation and booking the read as a step of the plan node being compiled
(``steps``). Keeping the question here and the answer there is what lets the plan sit below
the layer that reads: the compiler is a pure function of the query and these answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from thalabus_graph.plan.cost import Scope
from thalabus_graph.plan.steps import CategoryPattern, PhrasePlan, Restriction, Step
from thalabus_graph.settings import Settings


class ScopeStatistics(Protocol):
    """The scope's counts: its size, the node counts, a restriction's estimated size."""

    @property
    def value(self) -> Scope:
        """The scope as known now (nothing is read)."""

    def sized(self) -> Scope:
        """The scope with its size known when it has patterns."""

    def ready(self) -> Scope:
        """The scope with its size and the node counts known."""

    def restricted(self, restriction: Restriction | None,
                   category: CategoryPattern | None) -> int:
        """The estimated documents of a search restricted to ``restriction`` and
        ``category``."""

    def for_text(self, restriction: Restriction | None,
                 category: CategoryPattern | None) -> Scope:
        """The scope with what a full-text search's ``k`` needs."""


class PhraseLanguage(Protocol):
    """A phrase's text language as the plan shows and uses it."""

    @property
    def indexes(self) -> Sequence[tuple[str, str]]:
        """(source, index) of each full-text index its bag of words searches."""

    def detail(self) -> dict[str, Any]:
        """The language as a plan step shows it."""


class LanguageChooser(Protocol):
    """Chooses a phrase's text language (given, detected, or none)."""

    def choose(self, phrase: str) -> PhraseLanguage:
        """The phrase's text language and indexes."""


class ScaleState(Protocol):
    """Whether semantic scores are calibrated (a restricted phrase then reads its
    background), and the scale as explain shows it."""

    @property
    def calibrated(self) -> bool:
        """Whether the calibrated scale is on."""

    def explain(self) -> dict[str, Any]:
        """The scale as explain shows it."""


class Statistics(Protocol):
    """Everything the compiler reads from the graph, for one evaluation."""

    @property
    def settings(self) -> Settings:
        """The evaluation's settings (pools sized to its limit, the embedder's calibration)."""

    @property
    def reads(self) -> ScopeStatistics:
        """The scope and its counts."""

    @property
    def text_language(self) -> LanguageChooser:
        """The phrase language chooser."""

    @property
    def scale(self) -> ScaleState:
        """The semantic scale's state."""

    @property
    def defined(self) -> frozenset[str]:
        """The graph-defined category names the query uses (never pushed as patterns)."""

    @property
    def ids(self) -> Restriction | None:
        """The id scope (None: the scope is the patterns, or every document)."""

    @property
    def scope(self) -> Scope:
        """The scope value as known now."""

    @property
    def stream_limit(self) -> int | None:
        """The documents a pure filter query streams at most (None: every match)."""

    @property
    def steps(self) -> list[Step]:
        """Where reads are booked (the plan node being compiled)."""

    @steps.setter
    def steps(self, steps: list[Step]) -> None: ...

    def effective(self, restriction: Restriction | None) -> Restriction | None:
        """The restriction a search applies within the scope."""

    def on_procedure(self, plan: PhrasePlan) -> bool:
        """Whether the server's procedure plugin runs this phrase plan (its steps then name
        that path)."""

    def remembered_phrases(self) -> tuple[set[str], set[str], set[str]]:
        """Phrases whose range is remembered, whose unrestricted hits were read, whose fusion
        rule is fitted."""

    def category_count(self, category: CategoryPattern) -> int:
        """Documents of the scope having a pushed pattern."""

    def pair_documents(self, pairs: Sequence[tuple[str, str]]
                       ) -> dict[tuple[str, str], Restriction]:
        """Many categories' documents in one round trip."""

    def document_categories(self, documentids: Iterable[str]
                            ) -> dict[tuple[str, str], set[str]]:
        """The categories of a few documents."""

    def universe(self) -> Restriction:
        """Every document of the scope."""
