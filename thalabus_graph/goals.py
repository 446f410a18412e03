"""Goals: what a goal uses (datasets, its own RAG fragments, loaded documents) and the RAG
context built from them (docs/architecture.md, "Goals and their context").

Two budgets stay apart. Each collection (the goal's own RAG fragments, its datasets' members)
may fill the whole RAG message budget ``MAX_RAG_MESSAGE_LENGTH`` on its own; the loaded
documents have their own budget ``MAX_LOADED_DOCUMENT_LENGTH``. The message holds the loaded
documents first, then the fragment lines and category-only lines, and ``MAX_RAG_MESSAGE_LENGTH``
bounds all of it: what the loaded documents take is what the lines cannot have.

A text is quoted once: a member whose text lies within a member already taken from the same
document (a one-paragraph chapter's paragraph, a paragraph of a taken chapter) or within a
loaded document is left out, and a member whose text holds members already taken takes their
place (their characters go back to the budget).
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from neo4j import ManagedTransaction

from thalabus_graph.datasets import Datasets, Member, check_goal_id
from thalabus_graph.errors import ConfigurationError, DatasetInputError
from thalabus_graph.fragments import Fragment
from thalabus_graph.graph.database import Database, Record, run
from thalabus_graph.settings import RANGES, Settings

ELLIPSIS = "…"
"""Ends a message line the final truncation cut."""
_PAGE = 1000
"""Dataset members read per round trip while a context is collected."""
_DETAILS_CHUNK = 200
"""Documents whose details one read fetches for category-only lines: lines are made only until
the message is full, so a goal holding a large filter's stubs reads few details."""
_SKIPS = 1000
"""Consecutive members a collection pass leaves out for want of room before it stops reading:
past that many, the rest of a long dataset is not read for the odd short member."""

logger = logging.getLogger(__name__)


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


@dataclass(frozen=True)
class _Collected:
    """One dataset pass of a goal context: the members picked and how."""

    picked: _Picked
    fill_up: bool
    filled_from: list[str]
    scales: dict[str, str]


class Goals:
    """Attach datasets, RAG fragments and documents to goals; build a goal's context.

    Example:
        >>> graph.goals.use_dataset("g1", "s1#rerank_1")              # doctest: +SKIP
        >>> graph.goals.load_document("g1", "docid-1003")             # doctest: +SKIP
        >>> print(graph.goals.context("g1").message)                  # doctest: +SKIP
    """

    def __init__(self, db: Database, settings: Settings, datasets: Datasets) -> None:
        self.db = db
        self.settings = settings
        self.datasets = datasets

    def use_dataset(self, goalid: str, datasetid: str) -> int:
        """Attach a dataset to a goal (created when new); returns its ordinal."""
        return self.datasets.use_for_goal(goalid, datasetid)

    def add_fragments(self, goalid: str, fragments: Iterable[Fragment | Member]) -> int:
        """Attach RAG fragments to the goal itself (created when new), with their scores; a
        fragment attached again takes its new score. Category stubs attach their Document.
        One transaction: an id that is not in the graph fails it (``DatasetInputError``) and nothing
        is attached. Returns how many were given."""
        check_goal_id(goalid)
        rows, stubs = _rows(fragments)

        def work(tx: ManagedTransaction) -> int:
            added = 0
            for statement, chunk in (("goal_add_fragments", rows),
                                     ("goal_add_documents", stubs)):
                if chunk or statement == "goal_add_fragments":  # it also creates the goal
                    added += int(run(tx, statement, goalid=goalid, rows=chunk)[0]["added"])
            if added != len(rows) + len(stubs):
                raise DatasetInputError(f"goal {goalid!r}: {len(rows) + len(stubs)} fragments "
                                        f"given but only {added} exist in the graph")
            return added

        return self.db.write_tx(work, what="attaching RAG fragments to a goal")

    def load_document(self, goalid: str, documentid: str) -> int:
        """Load a whole document into a goal (created when new); returns its ordinal."""
        check_goal_id(goalid)
        rows = self.db.write("goal_load_document", goalid=goalid, documentid=documentid)
        if not rows:
            raise DatasetInputError(f"no document {documentid!r}")
        return int(rows[0]["ordinal"])

    def dataset_ids(self, goalid: str) -> list[str]:
        """The goal's datasets in ordinal order."""
        check_goal_id(goalid)
        return [r["datasetid"] for r in self.db.read("goal_datasets", goalid=goalid)]

    def context(self, goalid: str, *, min_score: float | None = None,
                target: int | None = None, char_budget: int | None = None,
                min_retrieval_score: float | None = None,
                loaded_budget: int | None = None) -> GoalContext:
        """The goal's RAG context: its own RAG fragments, its datasets' members and its loaded
        documents, and the message lines built from them.

        Datasets (docs/architecture.md, "Goals and their context"): members that pass the
        threshold of their weight's scale (hidden ones skipped) within ``char_budget``; when
        fewer than ``target`` pass, fill up per dataset from the best below-threshold members.
        Reranker-scale weights are held to ``min_score`` (``MIN_RERANKING_SCORE_FRAG``),
        retrieval-scale ones (a query's dataset, a rerank that kept the retrieved order, the
        unscored members of a partly failed rerank) to ``min_retrieval_score``
        (``MIN_RERANKING_SCORE_DOC``): a reranker threshold means nothing on retrieval scores.

        Budgets: ``char_budget`` (``MAX_RAG_MESSAGE_LENGTH``) is the ceiling of each collection
        and of the whole message; ``loaded_budget`` (``MAX_LOADED_DOCUMENT_LENGTH``) bounds the
        loaded documents' text, which the message holds first. A member that does not fit the
        room left is skipped and the pass goes on: one long chapter does not empty a context.

        Raises:
            DatasetInputError: the goal uses nothing (no dataset, fragment or document).
            ConfigurationError: a budget or target that is not a whole number in range (NaN,
                an infinity, a negative value), or a threshold that is not a finite number.
        """
        s = self.settings
        budget = _whole("char_budget", s.max_rag_message_length if char_budget is None
                        else char_budget, setting="max_rag_message_length")
        loaded_cap = _whole("loaded_budget", s.max_loaded_document_length
                            if loaded_budget is None else loaded_budget,
                            setting="max_loaded_document_length")
        wanted = _whole("target", s.max_reranking_output_doc if target is None else target,
                        setting="max_reranking_output_doc")
        threshold = _finite("min_score", s.min_reranking_score_frag if min_score is None
                            else min_score)
        retrieval_threshold = _finite("min_retrieval_score", s.min_reranking_score_doc
                                      if min_retrieval_score is None else min_retrieval_score)
        datasets = self.dataset_ids(goalid)
        own = self._own_fragments(goalid, budget)
        loaded = self._loaded(goalid, loaded_cap)
        if not datasets and not own.members and not loaded and not self._exists(goalid):
            raise DatasetInputError(f"goal {goalid!r} uses no dataset, fragment or document")
        collected = self._collect_datasets(
            goalid, datasets, budget=budget, threshold=threshold,
            retrieval_threshold=retrieval_threshold, target=wanted)
        picked = collected.picked
        ordered = sorted(picked.members.values(),
                         key=lambda m: (m.unscored, -m.score, m.fragmentid))
        merged, repeats = without_repeats(
            [*own.members.values(), *(m for m in ordered if m.fragmentid not in own.members)],
            loaded)
        blocks = (f"[{d.documentid}] {d.title}\n{d.text}" for d in loaded if d.text)
        lines, cut = truncate_lines(itertools.chain(blocks, self._lines(merged)), budget)
        return GoalContext(merged, collected.fill_up, picked.truncated or own.truncated,
                           picked.used, datasets, collected.filled_from, collected.scales,
                           len(own.members), own.used, loaded, lines, budget, cut,
                           own.repeats + picked.repeats + repeats)

    # --- the collections ---------------------------------------------------------------
    def _exists(self, goalid: str) -> bool:
        return bool(self.db.read("goal_get", goalid=goalid)[0]["found"])

    def _own_fragments(self, goalid: str, budget: int) -> _Picked:
        """The goal's own RAG fragments, best first, within the whole message budget (one
        that does not fit is skipped)."""
        picked = _Picked(budget)
        for row in self.db.read("goal_rag_fragments", goalid=goalid, max_chars=budget):
            picked.take(_member(row))
            if picked.done:
                break
        return picked

    def _collect_datasets(self, goalid: str, datasets: Sequence[str], *, budget: int,
                          threshold: float, retrieval_threshold: float,
                          target: int) -> _Collected:
        """The datasets' members: threshold by scale, then fill-up per dataset.

        A member that does not fit the room left is skipped and the pass goes on. Fill-up is
        skipped when the budget ran out in the normal pass (a member that would have fitted
        the whole budget did not fit what was left), when no member was below the threshold,
        or when the target is already met."""
        picked = _Picked(budget)
        fill_up = False
        filled_from: list[str] = []
        scales: dict[str, str] = {}
        for datasetid in datasets:
            scale = scales[datasetid] = self.datasets.weight_scale(datasetid)
            cuts = (threshold, retrieval_threshold)
            any_below = False
            for member in self._members(datasetid, budget):
                if member.fragmentid in picked.members:
                    continue
                if _below(member, scale, *cuts):
                    any_below = True
                    continue
                picked.take(member)
                if picked.done:
                    break
            if picked.exhausted or not any_below or len(picked.members) >= target:
                continue
            fill_up = True
            before = len(picked.members)
            read = 0
            # the members come best first, scored before unscored: the fill-up's order; a
            # second read, so that repeats and members too long are passed over, not counted
            for member in self._members(datasetid, budget):
                if len(picked.members) >= target or picked.done:
                    break
                if member.fragmentid in picked.members or not _below(member, scale, *cuts):
                    continue
                read += 1
                picked.take(member)
            filled_from.append(datasetid)
            logger.info("goal %s: fill-up from %s (%s scale) added %d of %d members below "
                        "the threshold it read", goalid, datasetid, scale,
                        len(picked.members) - before, read)
        return _Collected(picked, fill_up, filled_from, scales)

    def _members(self, datasetid: str, budget: int) -> Iterator[Member]:
        """A dataset's visible members best first, read a page at a time, each text cut to
        the budget (a longer member cannot be taken: its whole length says so)."""
        for page in self.datasets.pages(datasetid, page_size=_PAGE, max_chars=budget):
            yield from page

    def _loaded(self, goalid: str, budget: int) -> list[LoadedDocument]:
        """The loaded documents in ordinal order, cut to what the budget leaves each one (the
        server reads no chapter beyond the budget; ``characters`` is the whole length)."""
        out: list[LoadedDocument] = []
        left = budget
        for row in self.db.read("goal_loaded_documents", goalid=goalid, max_chars=budget):
            text = "\n\n".join(t for t in row["chapters"] if t)
            sizes = [n for n in row["sizes"] if n]
            whole = sum(sizes) + 2 * max(0, len(sizes) - 1)
            out.append(LoadedDocument(row["documentid"], row["title"], text[:max(0, left)],
                                      whole))
            left -= len(out[-1].text)
        return out

    # --- the message -------------------------------------------------------------------
    def _lines(self, members: Sequence[Member]) -> Iterator[str]:
        """A line per member with text, then a category-only line per stub's document (their
        details read a chunk at a time, as the final truncation asks for more lines)."""
        for m in members:
            if m.source != "category":
                yield f"[{m.fragmentid}] {' '.join((m.text or '').split())}"
        stubs = list(dict.fromkeys(m.documentid for m in members if m.source == "category"))
        for start in range(0, len(stubs), _DETAILS_CHUNK):
            yield from category_only_lines(self.db, stubs[start:start + _DETAILS_CHUNK])


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


def _below(member: Member, scale: str, threshold: float, retrieval_threshold: float) -> bool:
    """Whether a member is under the threshold of its weight's scale (retrieval-scale weights,
    and a partly failed rerank's unscored members, to ``retrieval_threshold``)."""
    on_retrieval = scale == "retrieval" or member.unscored
    return member.score < (retrieval_threshold if on_retrieval else threshold)


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


def _whole(name: str, value: object, *, setting: str) -> int:
    """``value`` when it is a whole number in the range of the setting it stands in for, else
    ConfigurationError: past that range a number no longer fits the 64-bit integers Neo4j
    takes as a parameter, and no budget that large means anything."""
    low, high = (int(bound) for bound in RANGES[setting])
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigurationError(f"{name} must be a whole number from {low:_} to {high:_} "
                                 f"({setting.upper()}'s range), not {value!r}")
    return value


def _finite(name: str, value: object) -> float:
    """``value`` when it is a finite number, else ConfigurationError."""
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or not math.isfinite(value):
        raise ConfigurationError(f"{name} must be a finite number, not {value!r}")
    return float(value)


class _Picked:
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


def _member(row: Record) -> Member:
    return Member(row["fragmentid"], row["documentid"], row["text"], float(row["weight"]),
                  row["source"], characters=row["characters"])


def _rows(fragments: Iterable[Fragment | Member]
          ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Rows for the fragments and for the stubs' documents, each id once (last score wins).

    Raises:
        ConfigurationError: an item that is not a ``Fragment`` or ``Member`` (an id string
            carries no score to attach; a lone string would be read as its characters).
    """
    rows: dict[str, dict[str, Any]] = {}
    stubs: dict[str, dict[str, Any]] = {}
    if isinstance(fragments, str):
        fragments = [fragments]
    for f in fragments:
        if not isinstance(f, Fragment | Member):
            raise ConfigurationError(
                f"a goal's RAG fragments are Fragment or Member objects (a query's or a "
                f"dataset's), not {type(f).__name__}: {str(f)[:80]!r}")
        (stubs if f.source == "category" else rows)[f.fragmentid] = {
            "id": f.fragmentid, "weight": float(f.score)}
    return list(rows.values()), list(stubs.values())
