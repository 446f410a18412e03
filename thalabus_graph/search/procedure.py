"""An unscoped phrase through the server's procedure plugin (docs/procedures.md): its vector
and full-text searches, fusion and calibration run inside Neo4j (``thalabus.phraseResult``),
by the same rules the engine's own statements and Python steps apply, so only the phrase's
results cross the wire. ``ProcedureState`` says, once per connection, whether the server runs
this engine's plugin; ``ProcedurePhrases`` runs one phrase's call and books it as the
``search_phrase`` call it replaces.

The plugin serves, in an unscoped query with a shipped calibration or none, a phrase whose
plan is its unrestricted search alone, and a fused filtered phrase whose restricted searches
the plan put on the exact or index path (``filtered``: the plan's choices travel with the
call, the restriction as values); every other phrase (a scope, the in-index path, a
calibration file of the user's) runs the engine's statements, which compute the same scores.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from thalabus_graph.errors import ConfigurationError
from thalabus_graph.fragments import Fragment, sort_fragments
from thalabus_graph.graph.database import Database
from thalabus_graph.graph.launcher.plugin import expected_version
from thalabus_graph.plan import cost
from thalabus_graph.plan.steps import (
    FilterPattern,
    Fusion,
    PhraseCall,
    PhrasePlan,
    Step,
    TextSearch,
    VectorSearch,
)
from thalabus_graph.scoring.scale import DroppedWarning, PhraseScale
from thalabus_graph.search.languages import TextLanguages
from thalabus_graph.search.runner import Runner
from thalabus_graph.search.scope import ScopeReads
from thalabus_graph.settings import Settings, plain_values

logger = logging.getLogger(__name__)
_LOCK = threading.Lock()
"""Serialises the first read of a connection's plugin state."""


class ProcedureState:
    """Whether the connection's server runs this engine's plugin, read once per connection
    (kept on the ``Database``) and judged by the ``procedures`` setting: off never asks, on
    fails when it does not."""

    def __init__(self, db: Database, settings: Settings) -> None:
        self.db = db
        self.settings = settings

    def available(self) -> bool:
        """True when phrases may run through the plugin.

        Raises:
            ConfigurationError: ``procedures`` is on and the server lacks this engine's plugin.
        """
        if self.settings.procedures == "off":
            return False
        if self.db.plugin is None:  # read once per connection; every later query skips the lock
            with _LOCK:
                if self.db.plugin is None:
                    self.db.plugin = self._read()
                    if not self.db.plugin[0]:
                        logger.info("procedure plugin not used: %s", self.db.plugin[1])
        usable, why = self.db.plugin
        if not usable and self.settings.procedures == "on":
            raise ConfigurationError(f"procedures is on but {why} (docs/procedures.md)")
        return usable

    def known_usable(self) -> bool:
        """Whether an earlier query found the server's plugin usable (reads nothing)."""
        return (self.settings.procedures != "off" and self.db.plugin is not None
                and self.db.plugin[0])

    def _read(self) -> tuple[bool, str]:
        runner = Runner(self.db)
        if not runner.alone("procedures_present", {})[0]["found"]:
            return False, "the server has no thalabus procedures"
        version = str(runner.alone("procedures_version", {})[0]["version"])
        wanted = expected_version()
        if version != wanted:
            return False, (f"the server's plugin implements {version}, this engine is "
                           f"{wanted}")
        return True, ""


def eligible(plan: PhrasePlan, scoped: bool) -> bool:
    """Whether the plugin can run this phrase plan, in an unscoped query: a semantic phrase
    whose plan is its one unrestricted call, fused with its text search or not (semantic
    only), or a fused filtered one (``filtered``)."""
    if scoped or not plan.semantic or not plan.searches:
        return False
    if not plan.unrestricted:
        return filtered(plan) is not None
    call, *rest = plan.searches
    if not isinstance(call, PhraseCall) or not call.results:
        return False
    if not rest:
        return not call.with_text
    return (len(rest) == 1 and isinstance(rest[0], Fusion) and not rest[0].restricted
            and call.with_text)


def filtered(plan: PhrasePlan) -> list[VectorSearch | TextSearch] | None:
    """The restricted searches of a fused filtered phrase the plugin can run (None: not such
    a plan): its unrestricted statistics read first, then its results' searches, restricted
    alike, each vector source on the exact or index path (or none), the full-text indexes,
    and the restricted fusion."""
    call, *rest = plan.searches
    if (not isinstance(call, PhraseCall) or not call.statistics or call.results
            or not call.with_text or not rest):
        return None
    *searches, fusion = rest
    if not isinstance(fusion, Fusion) or not fusion.restricted:
        return None
    out: list[VectorSearch | TextSearch] = []
    for search in searches:
        if isinstance(search, VectorSearch):
            if not search.filtered or search.path not in ("exact", "index", "none"):
                return None
        elif not isinstance(search, TextSearch):
            return None
        if search.role != "results":
            return None
        out.append(search)
    if len({(s.restriction, s.category) for s in out}) > 1:
        return None
    return out


def filter_options(searches: Sequence[VectorSearch | TextSearch]) -> dict[str, Any]:
    """The ``documentids``, ``filter`` and ``searches`` options of a filtered phrase's call:
    its restriction (the id list, the category pattern as the plugin's disjunctive normal
    form) and the searches the plan chose (``plan.searches.phrase_plan``), each with what
    the plugin needs to run and, for an index search that falls short, to ask again."""
    first = searches[0] if searches else None
    category = None if first is None else first.category
    conjunctions = (() if category is None else category.conjunctions
                    if isinstance(category, FilterPattern) else ((category,),))
    planned: list[dict[str, Any]] = []
    for search in searches:
        if isinstance(search, TextSearch):
            if search.k is not None:
                planned.append({"kind": "text" if search.path == "index" else "candidates",
                                "source": search.source, "index": search.index,
                                "k": search.k})
        elif search.path in ("exact", "index"):
            planned.append({"kind": search.path, "source": search.source.source,
                            "k": search.k, "top_n": search.top_n,
                            "walked": cost.walked(search.detail)})
    return {"documentids": (None if first is None or first.restriction is None
                            else sorted(first.restriction)),
            "filter": ([[{"name": lit.name, "values": list(lit.values),
                          "negated": lit.negated} for lit in conj] for conj in conjunctions]
                       if category is not None else None),
            "searches": planned}


@lru_cache(maxsize=16)
def overrides(settings: Settings) -> dict[str, Any]:
    """The settings that differ from the defaults, plain values only, secrets left out: what
    the plugin reads over the defaults its jar carries (``settings.plain_values``). Kept per
    settings (a connection asks for its own at every query); callers only read it."""
    return {name: value for name, value in plain_values(settings).items()
            if value != _DEFAULTS[name]}


_DEFAULTS = plain_values(Settings())


class ProcedurePhrases:
    """The plugin's phrase calls of one evaluation. ``details``: how many of a phrase's
    documents, best first, the call reads the details of (the query's ``limit``; -1: every
    one; 0: none, for a query that returns no documents)."""

    def __init__(self, runner: Runner, reads: ScopeReads, settings: Settings,
                 vector: Callable[[str], list[float]], languages: TextLanguages,
                 scale: PhraseScale, model_id: str, *, details: int) -> None:
        self.runner = runner
        self.reads = reads
        self.settings = settings
        self.vector = vector
        self.languages = languages
        self.scale = scale
        self.model_id = model_id
        self.details = details
        self._overrides = overrides(settings)

    def calibration(self) -> str | None:
        """The ``calibration`` option: the shipped model's name, ``none``, or None when the
        plugin cannot read the calibration in use (a file of the user's)."""
        if self.scale.calibration is None:
            return "none"
        if self.settings.calibration_file:
            return None
        return self.settings.embedder_model

    def params(self, phrase: str, *, with_text: bool, held: bool | None = None,
               restricted: dict[str, Any] | None = None) -> dict[str, Any]:
        """The parameters of one phrase's ``search_phrase_procedure`` call: its vector, the
        settings the plugin reads over its defaults, the calibration, and what the engine
        decided for the phrase (its text indexes; ``held``: whether its language is held,
        given only once the plugin said that it can change the phrase's gate;
        ``restricted``: a filtered phrase's ``filter_options``)."""
        calibration = self.calibration()
        assert calibration is not None, "ProcedurePhrases.usable was asked first"
        options: dict[str, Any] = {
            "settings": self._overrides, "calibration": calibration, "with_text": with_text,
            **(restricted or {})}
        if with_text:  # a phrase without text searches needs no text language
            options["text_indexes"] = [list(pair)
                                       for pair in self.languages.choose(phrase).indexes]
        if held is not None:
            options["held"] = held
        return {"text": phrase, "vector": self.vector(phrase), "options": options,
                "details": self.details}

    def prefetch(self, phrases: Sequence[tuple[str, bool]]) -> None:
        """Start several phrases' calls at once, each in its own session (``Runner.prefetch``):
        an OR of two phrases waits for the slower call instead of the sum of both."""
        wanted = list(dict.fromkeys(phrases))
        self.runner.prefetch("search_phrase_procedure",
                             [(key, self.params(key[0], with_text=key[1])) for key in wanted])

    def fragments(self, phrase: str, *, with_text: bool, steps: Sequence[Step],
                  restricted: Sequence[tuple[VectorSearch | TextSearch, Step]] = ()
                  ) -> list[Fragment]:
        """The phrase's fused, calibrated fragments from one ``thalabus.phraseResult`` call
        (started ahead when ``prefetch`` did), booked on ``steps`` (as explain renders the
        call: ``plan.searches.phrase_call_steps``), its warning kept by the scale, its node
        counts and documents' details by the evaluation. ``restricted``: a filtered phrase's
        searches (``filtered``) with their steps; ``steps`` are then its statistics'."""
        options = filter_options([s for s, _ in restricted]) if restricted else None
        ahead = (None if restricted else
                 self.runner.prefetched.pop(("search_phrase_procedure", phrase, with_text), None))
        params = {} if ahead is not None else self.params(phrase, with_text=with_text,
                                                          restricted=options)
        row = self.runner.read(steps[0], "search_phrase_procedure", plain=True, ahead=ahead,
                               **params)[0]
        # the phrase's language is read only when it can change its gate, as the engine's
        # own scale reads it (PhraseScale.remember); lingua costs milliseconds a phrase
        if row["language_matters"] and self.languages.held(phrase) is False:
            row = self.runner.read(steps[0], "search_phrase_procedure", plain=True, **self.params(
                phrase, with_text=with_text, held=False, restricted=options))[0]
        self.runner.share_call([*steps, *(step for _, step in restricted)],
                               "search_phrase_procedure")
        self.runner.details.update((entry[0], entry) for entry in row["details"] if entry)
        sizes = {str(k): int(v) for k, v in row["sizes"].items()}
        self.reads.learn(sizes)
        for step in steps:  # as search_phrase's steps say: each search's hits, or skipped
            source = step.detail.get("source") or str(step.detail.get("index", "")).split(
                "_fulltext")[0]
            step.rows = int(row["rows"].get(f"{step.kind}:{source}", 0))
            if not sizes.get(source, 0):
                step.detail.update(path="skipped", reason=f"no {source} in the graph")
        for search, step in restricted:
            key = ("semantic:" + search.source.source if isinstance(search, VectorSearch)
                   else "text:" + search.source)
            step.rows = int(row["rows"].get(f"filtered:{key}", 0))
            if f"filtered:k:{key}" in row["rows"]:
                step.detail["overfetch_k"] = int(row["rows"][f"filtered:k:{key}"])
            if f"filtered:path:{key}" in row["rows"]:
                step.detail.update(path="exact",
                                   reason="over-fetch fell short; exact fallback")
        self.scale.check_model(self.model_id, [str(m) for m in row["models"]])
        if row["warning"] is not None:
            w = row["warning"]
            self.scale.warned[phrase] = DroppedWarning(
                "scores", phrase, None, str(w["message"]), int(w["dropped"]), int(w["kept"]),
                None if w["best_cosine"] is None else float(w["best_cosine"]), str(w["rule"]))
        found = [Fragment(f, d, t, float(s), src, tuple(c))
                 for f, d, t, s, src, c in zip(row["fragmentids"], row["documentids"],
                                               row["texts"], row["scores"], row["sources"],
                                               row["contributions"], strict=True)]
        return sort_fragments(found)

    def usable(self) -> bool:
        """Whether this evaluation's phrases can go through the plugin (its calibration is
        one the plugin reads)."""
        return self.calibration() is not None
