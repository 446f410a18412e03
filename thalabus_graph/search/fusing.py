"""Fusing a phrase's semantic and text fragments by ``settings.fusion`` (the rules are in
``thalabus_graph.fusion``), with what each rule needs remembered per phrase: the semantic
range of its unrestricted search, its unrestricted hits, its fitted language-slots rule and
the documents' stored languages."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import assert_never

from thalabus_graph.fragments import Fragment
from thalabus_graph.scoring.fusion import (
    LanguageSlots,
    fuse_convex,
    fuse_max,
    fuse_rrf,
    ranked_onto,
)
from thalabus_graph.search.hits import stored_language
from thalabus_graph.search.runner import Runner
from thalabus_graph.settings import Settings

Fragments = tuple[list[Fragment], list[Fragment]]
"""A phrase's semantic fragments and its text fragments."""


class PhraseFusion:
    """The fusion of one evaluation's phrases.

    Attributes:
        ranges: phrase -> (min, max) semantic score of its unrestricted (scoped) search.
        unrestricted: phrase -> its unrestricted semantic and text candidates, as its
            unfiltered search read them (its fixed sample, ``PhraseSearches.sampled``, when
            the search read one): the language-slots rule is fitted on them.
        fitted: phrase -> its language-slots rule.
        languages: documentid -> stored language (None: none or unknown).
        semantic_scale: the fused scores must lie on the semantic (index) scale, which the
            calibration reads: convex, max and rrf then give their order the phrase's
            semantic scores (``fusion.ranked_onto``).
        lows: phrase -> the bottom of its semantic range, read from the fixed sample of its
            unrestricted candidates (``scale.sample``) so that a pool sized to a request
            does not move a fused score.
    """

    def __init__(self, runner: Runner, settings: Settings) -> None:
        self.runner = runner
        self.settings = settings
        self.ranges: dict[str, tuple[float, float]] = {}
        self.unrestricted: dict[str, tuple[list[Fragment], list[Fragment]]] = {}
        self.fitted: dict[str, LanguageSlots] = {}
        self.languages: dict[str, str | None] = {}
        self.lows: dict[str, float] = {}
        self.semantic_scale = False

    def remember_range(self, phrase: str, fragments: Sequence[Fragment]) -> None:
        """Keep the phrase's semantic range from its unrestricted fragments (its bottom from
        ``lows`` when the phrase's fixed candidate sample gave one)."""
        lo = self.lows.get(phrase, min((f.score for f in fragments), default=0.0))
        hi = max((f.score for f in fragments), default=0.0)
        self.ranges[phrase] = (lo, hi)

    def fuse(self, phrase: str, semantic: Sequence[Fragment], text: Sequence[Fragment], *,
             restricted: bool = False, fit: Fragments | None = None) -> list[Fragment]:
        """Fuse a phrase's semantic and text fragments by ``settings.fusion``.

        language-slots: fitted once per phrase on its unrestricted (scoped) candidates, then
        applied to these hits; convex: ``(1 - w) * semantic_minmax + w * text``; max: the
        larger of the two; rrf: reciprocal rank fusion (with ``semantic_scale``, those three
        orders carry the phrase's semantic scores, ``fusion.ranked_onto``). Semantic scores
        are min-max normalised over the phrase's unrestricted search, so a pushed-down filter never
        changes a fragment's fused score (rrf ranks do change). ``restricted`` says these
        hits are a filtered search; ``fit``: the phrase's unrestricted candidates, searched
        for the language-slots rule (the plan asks for them when the rule is not fitted yet
        and these hits are restricted). The semantic range was remembered before (the plan
        searched it when it was not known).
        """
        rule = self.settings.fusion
        if rule == "language-slots":
            return self._slots(phrase, semantic, text, restricted, fit).fuse(semantic, text)
        if rule == "rrf":
            fused = fuse_rrf(semantic, text, self.settings.rrf_k)
        elif rule == "max":
            fused = fuse_max(semantic, text, semantic_range=self.ranges[phrase])
        elif rule == "convex":
            fused = fuse_convex(semantic, text, semantic_range=self.ranges[phrase],
                                text_weight=self.settings.fusion_text_weight)
        else:
            assert_never(rule)  # mypy: every Fusion value is handled above
        return ranked_onto(fused, semantic) if self.semantic_scale else fused

    def _slots(self, phrase: str, semantic: Sequence[Fragment], text: Sequence[Fragment],
               restricted: bool, fit: Fragments | None) -> LanguageSlots:
        """The phrase's ``LanguageSlots`` rule, fitted on its unrestricted candidates (its
        fixed sample when read; searched again when these hits are restricted and they were
        not read) and their documents' languages."""
        if phrase not in self.fitted:
            if phrase in self.unrestricted:
                semantic, text = self.unrestricted[phrase]
            elif restricted:
                assert fit is not None, "the plan searches the fit of a restricted phrase"
                semantic, text = fit
            languages = self.document_languages({f.documentid for f in (*semantic, *text)})
            self.fitted[phrase] = LanguageSlots.fit(
                phrase, semantic, text, languages=languages,
                text_weight=self.settings.fusion_text_weight,
                full_coverage=self.settings.fusion_full_coverage,
                low=self.lows.get(phrase))
        return self.fitted[phrase]

    def document_languages(self, documentids: Iterable[str]) -> dict[str, str | None]:
        """The stored ``language`` of each document (None when it has none or is unknown):
        those an unfiltered ``search_phrase`` already returned or whose details a search
        read (``Runner.details``), the rest in one read returning a row per language."""
        wanted = set(documentids)
        self.languages.update({d: stored_language(self.runner.details[d][1].get("language"))
                               for d in wanted - self.languages.keys()
                               if d in self.runner.details})
        ids = sorted(wanted - self.languages.keys())
        if ids:
            step = self.runner.step("fusion", {"rule": "language-slots", "documents": len(ids)})
            rows = self.runner.read(step, "document_languages", documentids=ids)
            self.languages.update({d: stored_language(r["language"]) for r in rows
                                   for d in r["documentids"]})
            self.languages.update({d: None for d in ids if d not in self.languages})
        return {d: self.languages[d] for d in wanted}
