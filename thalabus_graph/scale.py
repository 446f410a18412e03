"""The scale of a phrase's scores: the one place a semantic phrase's fragments leave the vector
index's scale for the calibrated one (docs/architecture.md, "Score calibration").

A phrase's semantic and text hits are fused on the index scale, ``(1 + cosine) / 2``, exactly
as without calibration. Then every fragment of the phrase's result gets
``min(calibrated x factor, cap)`` of its source (``SCORE_FACTOR_*``, ``SCORE_CAP_*``), the
calibrated value read by the model's ``Calibration`` against the phrase's background,
remembered from the phrase's unrestricted search (so a pushed filter never changes a score),
and the fragments under ``MIN_SCORE`` drop. A fragment's contributions gain
``calibrated:<source> <raw> -> <calibrated>``.

One background per phrase, fitted on the candidates of all its vector sources together (their
sizes added; its best cosine and the phrase's lexical share among those candidates' texts,
``calibration.lexical_share``, are what the calibration's phrase gate reads, so a phrase about
something the graph lacks drops whole; candidates whose texts were not read give a share of
None, which the gate reads as 0.0, no shared word; a phrase in a language the graph's text
lacks, asked through ``held`` only when that can change its gate, gets the more lenient of the
gate and the calibration's cosine-only ``foreign_gate``), and one map: the phrase's scores go
through one strictly increasing function, so
the fused order of sources and of text hits is exactly today's (with factors and caps at 1).
A fused fragment's index-scale score is a slot value (a semantic score of its language group),
or, for a fragment only the text search found, a value below every semantic score of the
phrase, so a text-only hit stays below the phrase's semantic hits on the calibrated scale too.

Without a calibration (an embedding model with none shipped and no ``CALIBRATION_FILE``)
scores stay on the index scale: factor, cap and ``MIN_SCORE`` apply to the semantic hits
before fusion, as ``semantic_scaler`` says.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from thalabus_graph.calibration import (
    DEFAULT_SOURCE,
    Background,
    Calibration,
    Gate,
    lexical_share,
    load_for,
)
from thalabus_graph.fragments import Fragment, merge_contributions, sort_fragments
from thalabus_graph.settings import Settings


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


def sample(semantic: Iterable[Fragment], beyond: Iterable[tuple[str, float, str | None]] = ()
           ) -> list[tuple[str, float, str | None]]:
    """(source, index-scale score, text) of the best ``BACKGROUND_TOP_N`` candidates of each
    vector source among a phrase's unrestricted fragments and the candidates ``beyond`` its
    pool (a fragment found twice counts once)."""
    by_source: dict[str, list[tuple[float, str, str | None]]] = {}
    seen: set[str] = set()
    for f in semantic:
        if f.fragmentid not in seen:
            seen.add(f.fragmentid)
            by_source.setdefault(f.source, []).append((f.score, f.fragmentid, f.text))
    for source, score, text in beyond:
        by_source.setdefault(source, []).append((score, "", text))
    out: list[tuple[str, float, str | None]] = []
    for source, found in sorted(by_source.items()):
        found.sort(key=lambda t: (-t[0], t[1]))
        out += [(source, score, text) for score, _, text in found[:BACKGROUND_TOP_N]]
    return out


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
    """

    settings: Settings
    calibration: Calibration | None
    held: Callable[[str], bool | None] | None = None
    backgrounds: dict[str, Background] = field(default_factory=dict)
    remembered: set[str] = field(default_factory=set)

    @property
    def calibrated(self) -> bool:
        """Whether phrases leave the index scale."""
        return self.calibration is not None

    def remember(self, phrase: str, semantic: Sequence[Fragment],
                 sizes: Mapping[str, int],
                 beyond: Iterable[tuple[str, float, str | None]] = ()) -> None:
        """Keep the phrase's background from its unrestricted semantic candidates (index
        scale, no factor): the best ``BACKGROUND_TOP_N`` of every source (``sample``: the
        pool's fragments, then ``beyond`` it, as the search returned them), and those sources'
        fragment counts (``sizes``), with the phrase's lexical share among their texts when
        the gate reads it (tokenised here, once per phrase: no query of its own)."""
        if self.calibration is None or phrase in self.remembered:
            return
        drawn = sample(semantic, beyond)
        sources = {source for source, _, _ in drawn}
        size = sum(int(sizes.get(source, 0)) for source in sources)
        gate = self.calibration.gate
        if drawn:
            share = (lexical_share(phrase, (text for _, _, text in drawn))
                     if gate is not None and gate.share_slope is not None else None)
            bg = self.calibration.background([2.0 * score - 1.0 for _, score, _ in drawn],
                                             size, share)
            if (self.held is not None and self.calibration.language_matters(bg)
                    and self.held(phrase) is False):
                bg = dataclasses.replace(bg, foreign=True)
            self.backgrounds[phrase] = bg
        self.remembered.add(phrase)

    def apply(self, phrase: str, fragments: Iterable[Fragment]) -> list[Fragment]:
        """The phrase's fragments on the calibrated scale, those under ``MIN_SCORE`` dropped,
        best first. Unchanged without a calibration or a background (a phrase with no
        semantic candidate at all)."""
        fragments = list(fragments)
        bg = self.backgrounds.get(phrase)
        if self.calibration is None or bg is None:
            return sort_fragments(fragments)
        out: list[Fragment] = []
        scored = self.calibration.scorer(DEFAULT_SOURCE, bg)
        factors = {source: (_factor(self.settings, source), _cap(self.settings, source))
                   for source in {f.source for f in fragments}}
        for f in fragments:
            factor, cap = factors[f.source]
            score = min(scored(2.0 * f.score - 1.0) * factor, cap)
            if score >= self.settings.min_score:
                note = f"calibrated:{f.source} {f.score:.4f} -> {score:.4f}"
                out.append(Fragment(f.fragmentid, f.documentid, f.text, score, f.source,
                                    merge_contributions(f.contributions, (note,))))
        return sort_fragments(out)

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
                "calibrated": "P(relevant) of the hit's tail evidence x the phrase gate x "
                              "factor, capped",
                "gate": _gate_text(gate.midpoint_at(0.0), gate.midpoint_at(1.0),
                                   gate.share_slope is not None) if gate else "none",
                "foreign_gate": _foreign_text(self.calibration.foreign_gate)}


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
