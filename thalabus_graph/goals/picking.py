"""Which members a goal context takes: within a character budget, each text said once.

One job: the budgeted pick of one collection (``Picked``) and the repeat rule shared with the
whole message (``without_repeats``): a member whose text lies within a taken member of its
document, or within a loaded document, is left out, and one whose text holds taken members
takes their place, their characters going back to the budget.
"""

from __future__ import annotations

from collections.abc import Sequence

from thalabus_graph.datasets import Member
from thalabus_graph.goals.context import LoadedDocument

_SKIPS = 1000
"""Consecutive members a collection pass leaves out for want of room before it stops reading:
past that many, the rest of a long dataset is not read for the odd short member."""


def _normalised(text: str) -> str:
    """``text`` with its whitespace runs as one space: texts compared for containment."""
    return " ".join(text.split())


class _Texts:
    """The normalised texts taken so far, per document: what tells a repeat."""

    def __init__(self) -> None:
        self.by_document: dict[str, dict[str, str]] = {}

    def within(self, member: Member) -> bool:
        """Whether the member's text lies within a text taken from its document."""
        text = _normalised(member.text or "")
        return bool(text) and any(text in held for held in
                                  self.by_document.get(member.documentid, {}).values())

    def inside(self, member: Member) -> list[str]:
        """The ids of taken members of its document whose text lies within the member's."""
        text = _normalised(member.text or "")
        return [i for i, held in self.by_document.get(member.documentid, {}).items()
                if text and held in text]

    def add(self, member: Member, key: str | None = None) -> None:
        """Remember the member's text (under ``key``, by default its fragment id)."""
        if member.text:
            self.by_document.setdefault(member.documentid, {})[
                key or member.fragmentid] = _normalised(member.text)

    def drop(self, member: Member) -> None:
        """Forget the member's text."""
        self.by_document.get(member.documentid, {}).pop(member.fragmentid, None)


def without_repeats(members: Sequence[Member], loaded: Sequence[LoadedDocument] = ()
                   ) -> tuple[list[Member], int]:
    """``members`` without the ones whose text is already said, and how many were left out.

    In order, a member whose text (whitespace runs as one space) lies within a kept member of
    its document or within a loaded document's text is left out; a member whose text holds kept
    members of its document takes their place, so no text reaches the message twice. Stubs have
    no text and are all kept.

    Example:
        >>> paragraph = Member("d-p1", "d", "One paragraph.", 0.8, "paragraphs")
        >>> same = Member("d-c1", "d", "One  paragraph.", 0.6, "chapters")
        >>> longer = Member("d-c2", "d", "One paragraph. And more.", 0.5, "chapters")
        >>> [m.fragmentid for m in without_repeats([paragraph, same])[0]]
        ['d-p1']
        >>> [m.fragmentid for m in without_repeats([paragraph, longer])[0]]
        ['d-c2']
    """
    texts = _Texts()
    for d in loaded:
        texts.add(Member(d.documentid, d.documentid, d.text, 0.0, "loaded"), key="\0loaded")
    kept: dict[str, Member] = {}
    repeats = 0
    for m in members:
        if texts.within(m):
            repeats += 1
            continue
        for inner in texts.inside(m):
            repeats += 1
            texts.drop(kept.pop(inner))
        kept[m.fragmentid] = m
        texts.add(m)
    return list(kept.values()), repeats


class Picked:
    """Members chosen for a goal context within a character budget, each text once."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.members: dict[str, Member] = {}
        self.used = 0
        self.truncated = False
        self.exhausted = False
        self.repeats = 0
        self.skips = 0
        self.texts = _Texts()

    @property
    def done(self) -> bool:
        """No room is left, or the last ``_SKIPS`` members in a row did not fit: stop
        reading."""
        return self.used >= self.budget or self.skips >= _SKIPS

    def take(self, member: Member) -> bool:
        """Add the member if its text fits the room left and is not already held; False (and
        ``truncated``) when it does not fit. A member whose text lies within a held one of its
        document is a repeat (True, nothing added); one whose text holds held ones replaces
        them, their characters going back to the budget."""
        if self.texts.within(member):
            self.repeats += 1
            return True
        inner = self.texts.inside(member)
        freed = sum(self.members[i].size for i in inner)
        size = member.size
        if self.used - freed + size > self.budget:
            self.truncated = True
            self.exhausted = self.exhausted or size <= self.budget
            self.skips += 1
            return False
        for i in inner:
            self.texts.drop(self.members.pop(i))
            self.repeats += 1
        self.members[member.fragmentid] = member
        self.texts.add(member)
        self.used += size - freed
        self.skips = 0
        return True


__all__ = ["Picked", "without_repeats"]
