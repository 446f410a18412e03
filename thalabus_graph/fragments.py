"""The Fragment type and the AND / OR / NOT combination rules (docs/architecture.md,
"Evaluation rules").

Pure functions over lists of fragments: no I/O. Every function returns a new list sorted by
score descending, then fragment id (plain string order), so a replay gives the same order.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

CATEGORY_SOURCE = "category"


def document_id_of(fragmentid: str, source: str | None = None) -> str:
    """The document id of a fragment id: everything before the last hyphen.

    A category stub's id is its document's id whole (``fragmentid == documentid``), hyphens
    and all, and nothing in the id tells it from a fragment's: a caller holding a stub passes
    its ``source`` (``"category"``), or better keeps the document id it read with the id.

    Example:
        >>> document_id_of("docid-1001-c2"), document_id_of("docid-1001", "category")
        ('docid-1001', 'docid-1001')
    """
    if source == CATEGORY_SOURCE:
        return fragmentid
    head, sep, _ = fragmentid.rpartition("-")
    return head if sep else fragmentid


@dataclass(frozen=True)
class Fragment:
    """One retrieved piece of a document, or a document stub from a category search.

    A stub has ``fragmentid == documentid``, ``text is None``, ``score == 1.0`` and
    ``source == "category"``. ``contributions`` names the searches that produced it
    (``semantic:chapters``, ``text:keywords``, ``category`` ...). ``context``: the rows a
    query's graph context returned for it (``query(context=...)``; None when none was asked),
    not part of its identity.

    Example:
        >>> Fragment("docid-1-c1", "docid-1", "text", 0.8, "chapters").to_dict()["score"]
        0.8
    """

    fragmentid: str
    documentid: str
    text: str | None
    score: float
    source: str
    contributions: tuple[str, ...] = field(default=())
    context: list[dict[str, Any]] | None = field(default=None, compare=False, hash=False)

    def __init__(self, fragmentid: str, documentid: str, text: str | None, score: float,
                 source: str, contributions: tuple[str, ...] = (),
                 context: list[dict[str, Any]] | None = None) -> None:
        # The generated frozen __init__ sets each field through object.__setattr__, twice
        # the cost of filling the instance dict: a query builds a few thousand fragments.
        fields = self.__dict__
        fields["fragmentid"] = fragmentid
        fields["documentid"] = documentid
        fields["text"] = text
        fields["score"] = score
        fields["source"] = source
        fields["contributions"] = contributions
        fields["context"] = context

    @property
    def is_stub(self) -> bool:
        """True for a category-only document stub."""
        return self.source == CATEGORY_SOURCE

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: fragmentid, documentid, text, score, source, contributions (and
        context, when a graph context was asked)."""
        out: dict[str, Any] = {
            "fragmentid": self.fragmentid,
            "documentid": self.documentid,
            "text": self.text,
            "score": self.score,
            "source": self.source,
            "contributions": list(self.contributions),
        }
        if self.context is not None:
            out["context"] = [dict(row) for row in self.context]
        return out

    def with_context(self, rows: Iterable[dict[str, Any]]) -> Fragment:
        """A copy carrying a graph context's ``rows``."""
        return Fragment(self.fragmentid, self.documentid, self.text, self.score, self.source,
                        self.contributions, list(rows))

    def with_score(self, score: float, contributions: Iterable[str] = ()) -> Fragment:
        """A copy with another score and extra contributions merged in."""
        return Fragment(self.fragmentid, self.documentid, self.text, score, self.source,
                        merge_contributions(self.contributions, contributions))


def stub(documentid: str, contributions: tuple[str, ...] = (CATEGORY_SOURCE,)) -> Fragment:
    """The category-only stub of a document."""
    return Fragment(documentid, documentid, None, 1.0, CATEGORY_SOURCE, contributions)


def merge_contributions(*groups: Iterable[str]) -> tuple[str, ...]:
    """Union of contribution names, sorted so results do not depend on combination order."""
    return tuple(sorted({name for group in groups for name in group}))


def sort_fragments(fragments: Iterable[Fragment]) -> list[Fragment]:
    """Score descending, then fragment id ascending."""
    return sorted(fragments, key=lambda f: (-f.score, f.fragmentid))


def all_stubs(fragments: Sequence[Fragment]) -> bool:
    """A side that holds only stubs: a filter, never judged by its scores."""
    return all(f.is_stub for f in fragments)


def _by_document(fragments: Iterable[Fragment]) -> dict[str, list[Fragment]]:
    groups: dict[str, list[Fragment]] = {}
    for f in fragments:
        groups.setdefault(f.documentid, []).append(f)
    return groups


def _contributions_of(fragments: Iterable[Fragment]) -> tuple[str, ...]:
    return merge_contributions(*(f.contributions for f in fragments))


def _better(a: Fragment, b: Fragment) -> Fragment:
    """The higher-scored of two fragments with one id; the first on a tie; contributions merged."""
    winner = b if b.score > a.score else a
    return winner.with_score(winner.score, b.contributions if winner is a else a.contributions)


def _dedupe(fragments: Iterable[Fragment]) -> list[Fragment]:
    best: dict[str, Fragment] = {}
    for f in fragments:
        held = best.get(f.fragmentid)
        best[f.fragmentid] = f if held is None else _better(held, f)
    return sort_fragments(best.values())


def combine_and(left: Sequence[Fragment], right: Sequence[Fragment], *,
                left_filter: bool | None = None,
                right_filter: bool | None = None) -> list[Fragment]:
    """Fragments of the documents present on both sides.

    Both sides scored: each fragment gets ``sqrt(own score * best score of its document on
    the other side)``; fragments of both sides are kept (one per id, the higher). One side a
    pure filter: the scored side's fragments of the common documents, scores unchanged. Both
    filters: stubs of the common documents. Contributions of the other side's fragments of the
    same document are merged in, since they helped the fragment through.

    ``left_filter`` / ``right_filter``: whether a side is a pure filter, when the caller knows
    it better than the list does (a side searched only within some documents can hold only
    stubs although its whole result has scored fragments); None judges it from the list.
    """
    left_docs, right_docs = _by_document(left), _by_document(right)
    common = left_docs.keys() & right_docs.keys()
    if not common:
        return []
    if left_filter is None:
        left_filter = all_stubs(left)
    if right_filter is None:
        right_filter = all_stubs(right)
    if left_filter and right_filter:
        return _dedupe(
            f.with_score(f.score, _contributions_of(right_docs[f.documentid]))
            for f in left if f.documentid in common
        )
    if left_filter or right_filter:
        scored_docs, filter_docs = (right_docs, left_docs) if left_filter else (left_docs,
                                                                                right_docs)
        return _dedupe(
            f.with_score(f.score, _contributions_of(filter_docs[doc]))
            for doc in common for f in scored_docs[doc]
        )
    out: list[Fragment] = []
    for own_docs, other_docs in ((left_docs, right_docs), (right_docs, left_docs)):
        for doc in common:
            other = other_docs[doc]
            best_other = max(f.score for f in other)
            extra = _contributions_of(other)
            out.extend(
                f.with_score(math.sqrt(max(f.score, 0.0) * max(best_other, 0.0)), extra)
                for f in own_docs[doc]
            )
    return _dedupe(out)


def combine_or(left: Sequence[Fragment], right: Sequence[Fragment]) -> list[Fragment]:
    """Union by fragment id: the higher score wins with its text and source (left on a tie);
    contributions of both are merged."""
    return _dedupe([*left, *right])


def combine_not(universe: Sequence[Fragment], exclude: Sequence[Fragment]) -> list[Fragment]:
    """The universe's fragments whose document has nothing in ``exclude``, unchanged."""
    excluded = {f.documentid for f in exclude}
    return sort_fragments(f for f in universe if f.documentid not in excluded)


def aggregate_documents(fragments: Iterable[Fragment]) -> list[tuple[str, float]]:
    """(document id, best fragment score) pairs, best first, ties by document id."""
    best: dict[str, float] = {}
    for f in fragments:
        if f.documentid not in best or f.score > best[f.documentid]:
            best[f.documentid] = f.score
    return sorted(best.items(), key=lambda item: (-item[1], item[0]))


def rag_select(fragments: Iterable[Fragment], *, min_score: float, max_per_doc: int,
               max_total: int) -> list[Fragment]:
    """The fast path: drop fragments under ``min_score``, keep the best ``max_per_doc`` of
    each document, sort, cut to ``max_total``."""
    kept: list[Fragment] = []
    for group in _by_document(f for f in fragments if f.score >= min_score).values():
        kept.extend(sort_fragments(group)[:max_per_doc])
    return sort_fragments(kept)[:max_total]


__all__ = [
    "CATEGORY_SOURCE",
    "Fragment",
    "aggregate_documents",
    "all_stubs",
    "combine_and",
    "combine_not",
    "combine_or",
    "document_id_of",
    "merge_contributions",
    "rag_select",
    "sort_fragments",
    "stub",
]
