"""A goal's RAG context (``GoalContext``, ``LoadedDocument``) and the lines of its message.

One job: the values ``Goals.context`` returns and the two rules that turn members into message
text, a category-only line per document a filter matched and the final truncation to the
message budget (docs/architecture.md, "Goals and their context"), so the message's form is
defined apart from how the members are read and chosen.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from thalabus_graph.datasets import Member
from thalabus_graph.graph.database import Database

ELLIPSIS = "…"
"""Ends a message line the final truncation cut."""


@dataclass(frozen=True)
class LoadedDocument:
    """A document loaded into a goal whole: its chapters' text, cut to what the loaded-documents
    budget left for it (``characters`` is its full length)."""

    documentid: str
    title: str
    text: str
    characters: int

    @property
    def truncated(self) -> bool:
        """Whether the loaded-documents budget cut this document's text."""
        return len(self.text) < self.characters

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"documentid": self.documentid, "title": self.title, "text": self.text,
                "characters": self.characters, "truncated": self.truncated}


@dataclass(frozen=True)
class GoalContext:
    """What a goal contributes to a RAG message, and the message itself.

    Attributes:
        fragments: the goal's own RAG fragments, then its datasets' members (each fragment
            once, the goal's own first), category stubs included.
        fill_up_used / filled_from: whether (and from which datasets) fill-up added members
            below the threshold.
        truncated: a collection (own fragments or datasets) left a member out for want of
            room; a member longer than the whole budget is left out and the pass goes on.
        characters: text characters of the datasets' members collected.
        rag_characters: text characters of the goal's own RAG fragments collected.
        loaded: the loaded documents, each cut to the loaded-documents budget.
        lines: the message lines: a block per loaded document (``[documentid] title``, a
            newline, its text), then ``[fragmentid] text`` per fragment with text, then
            ``[documentid] title | NAME=v1,v2; ...`` per document of a category-only member.
        message_budget: the message's character budget, ``MAX_RAG_MESSAGE_LENGTH``: it counts
            every character of ``message``, the loaded documents' blocks included.
        message_truncated: the final truncation dropped or cut lines.
        repeats: members left out because their text is already in the message (within a
            member of their document, or within a loaded document).
    """

    fragments: list[Member]
    fill_up_used: bool
    truncated: bool
    characters: int
    datasets: list[str] = field(default_factory=list)
    filled_from: list[str] = field(default_factory=list)
    weight_scales: dict[str, str] = field(default_factory=dict)
    rag_fragments: int = 0
    rag_characters: int = 0
    loaded: list[LoadedDocument] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    message_budget: int = 0
    message_truncated: bool = False
    repeats: int = 0

    @property
    def message(self) -> str:
        """The RAG message: the lines, one per line; never longer than ``message_budget``."""
        return "\n".join(self.lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"fragments": [m.to_dict() for m in self.fragments],
                "fill_up_used": self.fill_up_used, "truncated": self.truncated,
                "characters": self.characters, "datasets": self.datasets,
                "filled_from": self.filled_from, "weight_scales": self.weight_scales,
                "rag_fragments": self.rag_fragments, "rag_characters": self.rag_characters,
                "loaded": [d.to_dict() for d in self.loaded], "message": self.message,
                "message_budget": self.message_budget,
                "message_truncated": self.message_truncated, "repeats": self.repeats}


def category_only_lines(db: Database, documentids: Sequence[str]) -> list[str]:
    """``[documentid] title | NAME=v1,v2; ...``: what the message says of a document a
    category filter matched, which has no text to quote (categories sorted by name)."""
    if not documentids:
        return []
    rows = db.read("document_details", documentids=list(documentids))
    details = {d[0]: d for d in rows[0]["documents"]} if rows else {}
    lines: list[str] = []
    for documentid in documentids:
        _, properties, _, categories = details.get(documentid, (documentid, {}, None, []))
        values: dict[str, list[str]] = {}
        for c in categories:
            values.setdefault(c["name"], []).append(c["value"])
        described = "; ".join(f"{name}={','.join(sorted(vs))}"
                              for name, vs in sorted(values.items()))
        title = properties.get("title") or documentid
        lines.append(f"[{documentid}] {title}" + (f" | {described}" if described else ""))
    return lines


def truncate_lines(lines: Iterable[str], budget: int) -> tuple[list[str], bool]:
    """The lines whose newline-joined text fits ``budget`` characters, and whether any were
    dropped. The first line that does not fit is cut (ending in ``ELLIPSIS``) when some of its
    text still fits after its ``[id]``; every later line is dropped, unread."""
    out: list[str] = []
    used = 0
    for line in lines:
        room = budget - used - (1 if out else 0)
        if len(line) <= room:
            out.append(line)
            used += len(line) + (1 if len(out) > 1 else 0)
            continue
        head = line.find("] ") + 2
        if room > head + len(ELLIPSIS):
            out.append(line[:room - len(ELLIPSIS)] + ELLIPSIS)
        return out, True
    return out, False


__all__ = ["ELLIPSIS", "GoalContext", "LoadedDocument", "category_only_lines", "truncate_lines"]
