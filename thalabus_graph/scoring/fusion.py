"""How a semantic phrase's vector hits and bag-of-words text hits become one ranked list.

Pure functions on ``Fragment`` lists (no Neo4j), so every rule is testable on hand-made scores.
The shipped rule is ``language-slots`` (``LanguageSlots``; README "Hybrid fusion"):

1. **Weak text evidence stays weak.** A text hit's score (BM25 divided by the best hit of its
   search, so the top hit is 1.0 however weak it is) is multiplied by
   ``min(1, coverage / full_coverage)``, where ``coverage`` is the share of the query's words
   the hit contains, each word weighted by its rarity among the phrase's candidates
   (``idf = ln(1 + candidates / (1 + text hits containing it))``). A hit that shares only
   "mit" with "vegetarisches Gericht mit Gemüse" keeps a small part of its score.
2. **Convex fusion.** Every candidate gets ``(1 - w) * semantic_minmax + w * text_evidence``
   (absent = 0; semantic scores min-max normalised over the phrase's candidates).
3. **Each language keeps its semantic slots.** Candidates are grouped by their document's
   language. A group's slots are the semantic scores its members held, best first, then one
   slot per text-only member below every semantic score (``floor * fused``). In the query's
   language (the language of the strongest text evidence) members take their group's slots in
   the order of the convex score; other groups keep the semantic order. Lexical evidence thus
   reorders documents only against documents of the query's language, and the interleaving of
   languages stays as semantic search ranked it: a French query's word matches cannot push
   German or English documents down.

With one language (or none stored) step 3 only replaces the convex scores by the semantic slot
values: the order is the convex fusion's. With text weight 0 the order is the semantic one.
The rule is fitted once per phrase on its unrestricted candidates and then applied to any
restricted search of the same phrase (``LanguageSlots.fuse``), so a pushed-down filter never
changes a fragment's score.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from thalabus_graph.fragments import Fragment, sort_fragments
from thalabus_graph.scoring.tokens import plain_words


@lru_cache(maxsize=4096)
def shared_words(query_words: frozenset[str], text: str | None) -> frozenset[str]:
    """The query words found in ``text`` (lowercased substring match).

    A substring test, not a word match: it runs at C speed (tokenising every hit in Python
    cost ~20 ms a SciFact query), it lets a German compound count ("gemüse" in
    "Gemüsepfanne"), and a short word it over-matches ("in" in "within") is found in most
    candidates, so its rarity weight makes it nearly worthless anyway. Cached: fitting and
    applying a rule look at the same hits several times.

    Example:
        >>> sorted(shared_words(frozenset({"gemüse", "reis", "brot"}), "Gemüsepfanne mit Reis"))
        ['gemüse', 'reis']
    """
    if not text:
        return frozenset()
    low = text.lower()
    return frozenset(filter(low.__contains__, query_words))


def _merged(lists: Iterable[Sequence[Fragment]]
            ) -> tuple[dict[str, Fragment], dict[str, tuple[str, ...]]]:
    """The first fragment seen per id and every contribution it gathered (sorted, distinct).

    One dict pass: a fragment found once keeps its own contributions tuple (a set is built
    only for an id seen twice), as this runs on every fused phrase's ~400 candidates.
    """
    first: dict[str, Fragment] = {}
    gathered: dict[str, tuple[str, ...] | set[str]] = {}
    for fragments in lists:
        for f in fragments:
            fid = f.fragmentid
            seen = gathered.get(fid)
            if seen is None:
                first[fid] = f
                gathered[fid] = f.contributions
            else:
                gathered[fid] = {*seen, *f.contributions}
    return first, {fid: c if isinstance(c, tuple) and len(c) <= 1 else tuple(sorted(set(c)))
                   for fid, c in gathered.items()}


def _best(fragments: Sequence[Fragment]) -> dict[str, float]:
    """Fragment id -> its best score in the list."""
    best: dict[str, float] = {}
    for f in fragments:
        if f.score > best.get(f.fragmentid, -math.inf):
            best[f.fragmentid] = f.score
    return best


def _rescored(first: Mapping[str, Fragment], contributions: Mapping[str, tuple[str, ...]],
              scores: Mapping[str, float]) -> list[Fragment]:
    return sort_fragments(Fragment(fid, f.documentid, f.text, scores[fid], f.source,
                                   contributions[fid]) for fid, f in first.items())


def minmax(score: float, semantic_range: tuple[float, float]) -> float:
    """``(score - lo) / (hi - lo)`` clipped to [0, 1]; an empty range (hi <= lo) gives 1.0.

    Example:
        >>> minmax(0.75, (0.5, 1.0))
        0.5
    """
    lo, hi = semantic_range
    if hi <= lo:
        return 1.0
    return min(max((score - lo) / (hi - lo), 0.0), 1.0)


def convex_scores(semantic: Sequence[Fragment], text: Sequence[Fragment], *,
                  semantic_range: tuple[float, float], text_weight: float
                  ) -> dict[str, float]:
    """``(1 - w) * minmax(semantic) + w * text`` per fragment id (absent side = 0).

    A fragment found twice in a list counts with its best score.
    """
    sem = {fid: minmax(s, semantic_range) for fid, s in _best(semantic).items()}
    txt = _best(text)
    return {fid: (1 - text_weight) * sem.get(fid, 0.0) + text_weight * txt.get(fid, 0.0)
            for fid in sem.keys() | txt.keys()}


def fuse_convex(semantic: Sequence[Fragment], text: Sequence[Fragment], *,
                semantic_range: tuple[float, float], text_weight: float) -> list[Fragment]:
    """Plain convex fusion (``convex_scores``), best first."""
    first, contributions = _merged((semantic, text))
    return _rescored(first, contributions,
                     convex_scores(semantic, text, semantic_range=semantic_range,
                                   text_weight=text_weight))


def fuse_max(semantic: Sequence[Fragment], text: Sequence[Fragment], *,
             semantic_range: tuple[float, float]) -> list[Fragment]:
    """The larger of the min-max semantic score and the text score per fragment."""
    sem = {fid: minmax(s, semantic_range) for fid, s in _best(semantic).items()}
    txt = _best(text)
    first, contributions = _merged((semantic, text))
    return _rescored(first, contributions,
                     {fid: max(sem.get(fid, 0.0), txt.get(fid, 0.0)) for fid in first})


def fuse_rrf(semantic: Sequence[Fragment], text: Sequence[Fragment], k: int) -> list[Fragment]:
    """Reciprocal rank fusion: ``sum 1 / (k + rank)`` over the two ranked lists."""
    scores: dict[str, float] = {}
    for ranked in (sort_fragments(semantic), sort_fragments(text)):
        for rank, f in enumerate(ranked, start=1):
            scores[f.fragmentid] = scores.get(f.fragmentid, 0.0) + 1.0 / (k + rank)
    first, contributions = _merged((semantic, text))
    return _rescored(first, contributions, scores)


def slot_scores(semantic: Mapping[str, float], fused: Mapping[str, float],
                groups: Mapping[str, str | None], reordered: Iterable[str | None]
                ) -> dict[str, float]:
    """Final scores: each group's members take the group's slots.

    Keys are documents for ``LanguageSlots`` (any hashable id works).

    Args:
        semantic: id -> semantic score (the output scale) of the semantic hits.
        fused: id -> convex score in [0, 1] of every candidate (semantic or not).
        groups: id -> group key (its document's language; None is a group too).
        reordered: the groups whose members are ordered by ``fused`` (the query's language);
            members of the other groups keep their semantic order.

    A group's slots are its members' semantic scores, best first, then one slot per text-only
    member: ``floor * fused``, ``floor`` being the lowest semantic score of all groups, so those
    slots lie below every semantic score and stay ordered by ``fused`` across groups.
    Ties keep the better other score first, then the fragment id.
    """
    floor = min(semantic.values(), default=1.0)
    chosen = set(reordered)
    members: dict[str | None, list[str]] = {}
    for fid in fused:
        members.setdefault(groups.get(fid), []).append(fid)
    out: dict[str, float] = {}
    for group, ids in members.items():
        if group in chosen:
            ordered = sorted(ids, key=lambda f: (-fused[f], -semantic.get(f, -1.0), f))
        else:
            ordered = sorted(ids, key=lambda f: (-semantic.get(f, -1.0), -fused[f], f))
        slots = sorted((semantic[f] for f in ids if f in semantic), reverse=True)
        for position, fid in enumerate(ordered):
            out[fid] = slots[position] if position < len(slots) else floor * fused[fid]
    return out


def _highest(scores: Mapping[str, float]) -> float:
    """The largest score (0.0 for none)."""
    return max(scores.values(), default=0.0)


def _rarity(query_words: frozenset[str], text: Sequence[Fragment], semantic: Mapping[str, float]
            ) -> tuple[dict[str, frozenset[str]], dict[str, float]]:
    """The query words each text hit contains (by fragment id), and each query word's rarity
    among the candidates: ``ln(1 + candidates / (1 + text hits containing it))``, candidates
    being the semantic hits and text hits together (distinct fragment ids)."""
    hit_found = {f.fragmentid: shared_words(query_words, f.text) for f in text}
    candidates = len(semantic.keys() | hit_found.keys())
    holding = Counter(w for found in hit_found.values() for w in found)
    return hit_found, {w: math.log(1 + candidates / (1 + holding[w])) for w in query_words}


@dataclass(frozen=True)
class LanguageSlots:
    """The ``language-slots`` rule fitted on one phrase's unrestricted candidates.

    Build it with ``fit``; ``fuse`` scores any (possibly restricted) lists of the same phrase.
    Slots are held by documents (a document's slot is its best semantic fragment score, its
    fused score its best fragment's); a fragment scores its document's slot minus how far its
    own convex score lies below its document's best, on the semantic scale
    (``(fused_doc - fused) * (hi - lo)``), so fragments of one document keep the convex order.

    Attributes:
        semantic_range: (lo, hi) semantic score of the candidates.
        text_weight: ``w`` of the convex fusion.
        full_coverage: weighted word coverage at which text evidence counts whole (0: always).
        floor: the lowest semantic score of the candidates (1.0 without any): slots of
            text-only documents lie below it.
        idf: query word -> its rarity weight among the candidates.
        query_language: the language whose documents lexical evidence reorders.
        slots: document id -> its slot, for every candidate document.
        best_fused: document id -> the best convex score of its candidate fragments.
        fitted: fragment id -> convex score of every candidate (reused by ``fuse``).
    """

    semantic_range: tuple[float, float]
    text_weight: float
    full_coverage: float
    floor: float
    idf: Mapping[str, float]
    query_language: str | None = None
    slots: Mapping[str, float] = field(default_factory=dict)
    best_fused: Mapping[str, float] = field(default_factory=dict)
    fitted: Mapping[str, float] = field(default_factory=dict)

    @classmethod
    def fit(cls, query: str, semantic: Sequence[Fragment], text: Sequence[Fragment], *,
            languages: Mapping[str, str | None], text_weight: float,
            full_coverage: float, low: float | None = None) -> LanguageSlots:
        """Fit the rule on the phrase's unrestricted semantic and text candidates.

        ``text`` scores are divided by their search's best hit; ``languages`` maps each
        candidate's document id to its language (missing = None, one group of its own);
        ``low``: the bottom of the semantic range (default: the lowest candidate), given by a
        caller that reads it from a fixed sample of the phrase's candidates so that a pool
        sized to a request does not move it.
        """
        sem = _best(semantic)
        lo = min(sem.values(), default=0.0) if low is None or not sem else low
        hit_found, idf = _rarity(plain_words(query), text, sem)
        model = cls((lo, _highest(sem)), text_weight, full_coverage, lo if sem else 1.0, idf)
        evidence = model._evidence_scores(text, hit_found)
        fused = model._convex(sem, evidence)
        query_language = None
        if evidence:
            strongest = min(text, key=lambda f: (-evidence[f.fragmentid], f.fragmentid))
            query_language = languages.get(strongest.documentid)
        doc_sem: dict[str, float] = {}
        for f in semantic:
            best = doc_sem.get(f.documentid)
            if best is None or f.score > best:
                doc_sem[f.documentid] = f.score
        best_fused: dict[str, float] = {}
        for f in (*semantic, *text):
            score = fused[f.fragmentid]
            if score > best_fused.get(f.documentid, 0.0) or f.documentid not in best_fused:
                best_fused[f.documentid] = max(best_fused.get(f.documentid, 0.0), score)
        groups = {d: languages.get(d) for d in best_fused}
        slots = slot_scores(doc_sem, best_fused, groups, (query_language,))
        return dataclasses.replace(model, query_language=query_language, slots=slots,
                                   best_fused=best_fused, fitted=fused)

    def _evidence_scores(self, text: Sequence[Fragment],
                         found: Mapping[str, frozenset[str]]) -> dict[str, float]:
        """Fragment id -> its best text evidence (``evidence``), from the query words each
        hit was found to contain (``found``, by fragment id)."""
        total = sum(self.idf.values())
        weights = tuple(self.idf.items())
        share: dict[frozenset[str], float] = {}  # hits share few distinct word sets
        out: dict[str, float] = {}
        for f in text:
            score = f.score
            if self.full_coverage > 0:
                words_in = found[f.fragmentid]
                covered = share.get(words_in)
                if covered is None:
                    covered = share[words_in] = (
                        sum(weight for w, weight in weights if w in words_in) / total
                        if total > 0 else 0.0)
                score *= min(1.0, covered / self.full_coverage)
            if score > out.get(f.fragmentid, -math.inf):
                out[f.fragmentid] = score
        return out

    def _convex(self, semantic: Mapping[str, float], evidence: Mapping[str, float]
                ) -> dict[str, float]:
        """``convex_scores`` on best-score maps (semantic raw, evidence weighted)."""
        lo, hi = self.semantic_range
        w = self.text_weight
        span = hi - lo
        out: dict[str, float] = {}
        for fid, s in semantic.items():
            norm = min(max((s - lo) / span, 0.0), 1.0) if span > 0 else 1.0
            out[fid] = (1 - w) * norm + w * evidence.get(fid, 0.0)
        for fid, e in evidence.items():
            if fid not in out:
                out[fid] = w * e
        return out

    def coverage(self, text: str | None) -> float:
        """Share of the query's rarity weight that ``text`` contains (0 without query words).

        Example:
            >>> m = LanguageSlots((0, 1), 0.5, 0.25, 0.0, {"mit": 0.5, "gemüse": 1.5})
            >>> m.coverage("Brot mit Butter")
            0.25
        """
        total = sum(self.idf.values())
        if total <= 0:
            return 0.0
        found = shared_words(frozenset(self.idf), text)
        return sum(weight for w, weight in self.idf.items() if w in found) / total

    def evidence(self, text: Sequence[Fragment]) -> list[Fragment]:
        """Text hits with their score times ``min(1, coverage / full_coverage)``."""
        if self.full_coverage <= 0:
            return list(text)
        return [Fragment(f.fragmentid, f.documentid, f.text,
                         f.score * min(1.0, self.coverage(f.text) / self.full_coverage),
                         f.source, f.contributions) for f in text]

    def fused(self, semantic: Sequence[Fragment], evidence: Sequence[Fragment]
              ) -> dict[str, float]:
        """The convex score of each fragment (``evidence`` already weighted)."""
        return convex_scores(semantic, evidence, semantic_range=self.semantic_range,
                             text_weight=self.text_weight)

    def fuse(self, semantic: Sequence[Fragment], text: Sequence[Fragment]) -> list[Fragment]:
        """The fused list of these (possibly restricted) hits of the fitted phrase.

        A fragment of a candidate document scores from its document's slot (class docstring,
        never above the slot); a document only a restricted search found lies below every
        candidate (``floor * fused``, like a text-only slot).
        """
        fused = dict(self.fitted)
        if any(f.fragmentid not in fused for f in (*semantic, *text)):
            fused = self.fused(semantic, self.evidence(text))  # a restricted search's own hits
        span = max(self.semantic_range[1] - self.semantic_range[0], 0.0)
        first, contributions = _merged((semantic, text))
        scores: dict[str, float] = {}
        for fid, f in first.items():
            slot = self.slots.get(f.documentid)
            if slot is None:
                scores[fid] = self.floor * fused[fid]
            else:
                below = max(self.best_fused[f.documentid] - fused[fid], 0.0) * span
                scores[fid] = max(slot - below, 0.0)
        return _rescored(first, contributions, scores)



def ranked_onto(fused: Sequence[Fragment], semantic: Sequence[Fragment]) -> list[Fragment]:
    """A fused list's order on its phrase's semantic scale: the fragment ranked ``i`` gets the
    ``i``-th best semantic score of the phrase's hits (a language group's slots, with one group),
    and those ranked below every semantic hit ``floor x`` their share of the last fused score
    there, below every semantic score. So a rule whose scores are not on the vector index's
    scale (reciprocal ranks, min-max blends) keeps its order exactly, and a calibration reading
    the index scale reads it.

    Example:
        >>> a = Fragment("a", "d", None, 0.02, "chapters", ())
        >>> b = Fragment("b", "d", None, 0.01, "chapters", ())
        >>> semantic = [Fragment("b", "d", None, 0.8, "chapters", ())]
        >>> [(f.fragmentid, f.score) for f in ranked_onto([a, b], semantic)]
        [('a', 0.8), ('b', 0.2)]
    """
    slots = sorted((f.score for f in semantic), reverse=True)
    if not slots:
        return list(fused)
    ordered = sort_fragments(fused)
    floor = slots[-1]
    last = ordered[min(len(slots), len(ordered)) - 1].score if ordered else 0.0
    out: list[Fragment] = []
    for i, f in enumerate(ordered):
        if i < len(slots):
            score = slots[i]
        else:
            share = f.score / last if last > 0 else 0.0
            score = floor * min(share, 1.0) * 0.5
        out.append(Fragment(f.fragmentid, f.documentid, f.text, score, f.source,
                            f.contributions))
    return out
