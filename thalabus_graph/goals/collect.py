"""Goals: what a goal uses (datasets, its own RAG fragments, loaded documents), read from
the graph and collected into its RAG context (docs/architecture.md, "Goals and their context").

One job: attach datasets, fragments and documents to a goal and collect its context from the
graph, by threshold, fill-up and budget; the context's values and message lines are
``goals.context``, the budgeted pick of members ``goals.picking``.

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
from dataclasses import dataclass
from typing import Any

from neo4j import ManagedTransaction

from thalabus_graph.datasets import Datasets, Member, check_goal_id
from thalabus_graph.errors import ConfigurationError, DatasetInputError
from thalabus_graph.fragments import Fragment
from thalabus_graph.goals.context import (
    GoalContext,
    LoadedDocument,
    category_only_lines,
    truncate_lines,
)
from thalabus_graph.goals.picking import Picked, without_repeats
from thalabus_graph.graph.database import Database, Record, run
from thalabus_graph.settings import RANGES, Settings

_PAGE = 1000
"""Dataset members read per round trip while a context is collected."""
_DETAILS_CHUNK = 200
"""Documents whose details one read fetches for category-only lines: lines are made only until
the message is full, so a goal holding a large filter's stubs reads few details."""

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Collected:
    """One dataset pass of a goal context: the members picked and how."""

    picked: Picked
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

    def _own_fragments(self, goalid: str, budget: int) -> Picked:
        """The goal's own RAG fragments, best first, within the whole message budget (one
        that does not fit is skipped)."""
        picked = Picked(budget)
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
        picked = Picked(budget)
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


def _below(member: Member, scale: str, threshold: float, retrieval_threshold: float) -> bool:
    """Whether a member is under the threshold of its weight's scale (retrieval-scale weights,
    and a partly failed rerank's unscored members, to ``retrieval_threshold``)."""
    on_retrieval = scale == "retrieval" or member.unscored
    return member.score < (retrieval_threshold if on_retrieval else threshold)


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
