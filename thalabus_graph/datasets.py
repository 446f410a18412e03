"""Datasets: result sets stored in the graph, inspectable with Cypher, and their use by goals.

A dataset is written in one write transaction (node, members, lineage, flags), so a failed
write leaves nothing behind. Members point at fragment nodes, or at the Document for a category
stub; ``weight`` is the score, ``hidden`` hides a member from readers of that dataset only.

Weight scales: a dataset node says which scale its weights are on (``weight_scale``):
``retrieval`` (a query's scores, or a rerank that kept the retrieved order), ``reranker`` (a
complete rerank) or ``mixed`` (a partly failed rerank: members marked ``unscored`` keep their
retrieval weight and follow the scored ones). Thresholds are applied on the matching scale.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from neo4j import ManagedTransaction

from thalabus_graph.errors import ConfigurationError, DatasetError, DatasetInputError
from thalabus_graph.fragments import Fragment
from thalabus_graph.graph.database import Database, Record, run
from thalabus_graph.ingest.source import MAX_KEY_BYTES
from thalabus_graph.query import Semantic, serialize
from thalabus_graph.query.ast import id_list
from thalabus_graph.settings import Settings

_WRITE_CHUNK = 5000
WEIGHT_SCALES = ("retrieval", "reranker", "mixed")
"""The values of a Dataset node's ``weight_scale``."""

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Member:
    """One dataset member as read back: its id, score and (for fragments) text.

    ``score`` is what the graph stores as the ``weight`` of the member's ``AGGREGATES``
    relationship (docs/architecture.md, "Vocabulary"); the JSON form keeps the graph's name.
    A read returns at most a bound of text (``MAX_RESULT_TEXT_CHARS`` for a reader,
    ``MAX_RERANK_CHARS`` for reranking, the message budget for a goal): ``text`` is then the
    stored text's first characters, unchanged, and ``characters`` its whole length
    (``text_truncated`` says whether it was cut); None when unknown.
    """

    fragmentid: str
    documentid: str
    text: str | None
    score: float
    source: str
    hidden: bool = False
    original_score: float | None = None
    rerank_text: str = ""
    unscored: bool = False
    characters: int | None = None

    @property
    def size(self) -> int:
        """The whole text's length (``characters`` when read, else the text's own)."""
        return len(self.text or "") if self.characters is None else self.characters

    @property
    def text_truncated(self) -> bool:
        """Whether the read cut the text at its bound."""
        return self.size > len(self.text or "")

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"fragmentid": self.fragmentid, "documentid": self.documentid,
                "text": self.text, "weight": self.score, "source": self.source,
                "hidden": self.hidden, "original_score": self.original_score,
                "unscored": self.unscored, "characters": self.characters,
                "text_truncated": self.text_truncated}


@dataclass(frozen=True)
class DatasetInfo:
    """A dataset node as `Datasets.get` reads it: its properties, member counts and parents.

    The rerank flags (``reranked``, ``reason``, ``failures``, ``unscored``, ``capped``,
    ``source_query``, ``clauses``) are None on a dataset no rerank wrote.
    """

    datasetid: str
    name: str | None
    kind: str
    query: str | None
    created_at: str
    session: str
    weight_scale: str
    reranked: bool | None
    reason: str | None
    failures: int | None
    unscored: int | None
    capped: int | None
    members: int
    hidden: int
    derived_from: list[str] = field(default_factory=list)
    source_query: str | None = None
    clauses: str | None = None
    """How a rerank scored a multi-clause query: ``joined``, ``geometric`` or ``minimum``."""

    def stored_query(self) -> str:
        """The query this dataset's members answer, in query syntax: a query's dataset stores
        it as ``query``; a rerank stores its plain rerank text as ``query`` and the query it
        came from as ``source_query``. A rerank dataset without ``source_query`` has only its
        rerank text, read as one phrase: its semantic clauses, joined, are that text again."""
        if self.source_query is not None:
            return self.source_query
        if self.kind == "rerank" and self.query:
            return serialize(Semantic(self.query))
        return self.query or ""

    @classmethod
    def from_record(cls, row: Record) -> DatasetInfo:
        """From a ``dataset_get`` row (its columns are the field names)."""
        return cls(**{name: row[name] for name in cls.__dataclass_fields__})

    def to_dict(self) -> dict[str, Any]:
        """JSON form: the ``dataset_get`` row, key for key."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


class Datasets:
    """Create, read, hide and list datasets; attach them to goals.

    Example:
        >>> ds = graph.datasets.create(fragments, session="s1", query='"x"')  # doctest: +SKIP
        >>> graph.datasets.members(ds)[:3]                                    # doctest: +SKIP
    """

    def __init__(self, db: Database, settings: Settings) -> None:
        self.db = db
        self.settings = settings

    def create(self, fragments: Iterable[Fragment | Member], *, session: str, query: str = "",
               kind: str = "dataset", name: str | None = None,
               derived_from: str | None = None,
               flags: Mapping[str, Any] | None = None, goal: str | None = None) -> str:
        """Write a dataset ``{session}#{kind}_{n}`` with the fragments as members, in one
        transaction; returns its id. ``n`` is allocated inside that transaction under the
        write lock of the session's sequence node, so concurrent creators get distinct,
        consecutive numbers and none fails.

        ``flags`` are extra Dataset node properties written in the same transaction (a rerank
        records ``reranked``, ``reason``, ``failures`` and ``weight_scale`` this way);
        ``weight_scale`` defaults to ``retrieval``.

        ``goal``: the goal (created when new) uses the new dataset, linked in the same
        transaction; when the goal used ``derived_from``, the new dataset takes its place.

        ``fragments`` may be an iterator (``ThalabusGraph.stream``): it is consumed and written
        in pages of ``_WRITE_CHUNK`` members inside the one transaction, so a pure filter's
        stubs are never held as one list; its members must be distinct by id (a stream is), a
        sequence is deduplicated whole. An iterator cannot be replayed: when the driver would
        retry the transaction after consuming part of it, ``DatasetError`` says so and nothing
        is written.
        """
        node_flags = {"weight_scale": "retrieval", **(flags or {})}
        _check_create(node_flags, session, goal)
        pages: Iterable[Sequence[Fragment | Member]] = (
            [fragments] if isinstance(fragments, Sequence) else _pages(fragments))
        started = False

        def work(tx: ManagedTransaction) -> str:
            nonlocal started
            if started and not isinstance(fragments, Sequence):
                raise DatasetError("the transaction writing a streamed dataset must be retried, "
                                   "but its stream is consumed: run the query again")
            started = True
            number = int(run(tx, "dataset_next_number", session=session, kind=kind)[0]["number"])
            datasetid = f"{session}#{kind}_{number}"
            run(tx, "dataset_create", datasetid=datasetid, name=name or datasetid, kind=kind,
                query=query, session=session, number=number, size=0)
            added, given = _add_members(tx, datasetid, pages)
            if added != given:
                raise DatasetInputError(f"{datasetid}: {given} members given but only {added} "
                                   "exist in the graph")
            if derived_from is not None:
                run(tx, "dataset_derive", datasetid=datasetid, parent=derived_from)
            run(tx, "dataset_flag", datasetid=datasetid, flags={**node_flags, "size": given})
            if goal is not None:
                row = run(tx, "goal_use_dataset", goalid=goal, datasetid=datasetid,
                          replaces=derived_from)[0]
                logger.info("goal %s uses %s (ordinal %d%s)", goal, datasetid, row["ordinal"],
                            f", in place of {derived_from}" if row["replaced"] else "")
            return datasetid

        if derived_from is not None:
            self.get(derived_from)
        return self.db.write_tx(work, what="creating a dataset")

    def get(self, datasetid: str) -> DatasetInfo:
        """The dataset's node properties, member counts and parents; DatasetError if unknown."""
        rows = self.db.read("dataset_get", datasetid=datasetid)
        if not rows:
            raise DatasetInputError(f"no dataset {datasetid!r} (list them: thalabus-graph "
                                    "datasets list)")
        return DatasetInfo.from_record(rows[0])

    def list_datasets(self, session: str | None = None) -> list[Record]:
        """Every dataset (of one session when given), oldest first."""
        return self.db.read("dataset_list", session=session)

    def members(self, datasetid: str, *, include_hidden: bool = False,
                limit: int | None = None) -> list[Member]:
        """Members best first (ties by id); hidden ones only when asked; texts cut to
        ``MAX_RESULT_TEXT_CHARS`` (see `Member`)."""
        self.get(datasetid)
        out: list[Member] = []
        for page in self.pages(datasetid, page_size=limit or 10000,
                               include_hidden=include_hidden,
                               max_chars=self.settings.max_result_text_chars):
            out.extend(page)
            if limit is not None and len(out) >= limit:
                return out[:limit]
        return out

    def pages(self, datasetid: str, *, page_size: int, include_hidden: bool = False,
              max_chars: int | None = None) -> Iterator[list[Member]]:
        """Members in pages of ``page_size``, best first: one page in memory at a time; texts
        cut to ``max_chars`` (default ``MAX_RESULT_TEXT_CHARS``) by the server itself."""
        bound = self.settings.max_result_text_chars if max_chars is None else max_chars
        skip = 0
        while True:
            rows = self.db.read("dataset_members", datasetid=datasetid, skip=skip,
                                limit=page_size, include_hidden=include_hidden,
                                max_chars=bound)
            if not rows:
                return
            yield [_member(r) for r in rows]
            if len(rows) < page_size:
                return
            skip += page_size

    def hide(self, datasetid: str, ids: Sequence[str], hidden: bool = True) -> int:
        """Hide (or show again) members of one dataset; returns how many members matched.

        Raises:
            ConfigurationError: ``ids`` is None or not a string or list of strings.
        """
        members = id_list(ids, "member ids")
        if members is None:
            raise ConfigurationError("member ids must be given: a string or a list of strings")
        self.get(datasetid)
        rows = self.db.write("dataset_hide", datasetid=datasetid, ids=members, hidden=hidden)
        return int(rows[0]["changed"])

    def missing_members(self, datasetid: str, ids: Sequence[str]) -> list[str]:
        """The ids of ``ids`` that are not members of the dataset (in the given order)."""
        rows = self.db.read("dataset_member_ids", datasetid=datasetid, ids=list(ids))
        present = {r["id"] for r in rows}
        return [i for i in ids if i not in present]

    def weight_scale(self, datasetid: str) -> str:
        """``retrieval`` | ``reranker`` | ``mixed``: the scale of the dataset's weights."""
        return self.get(datasetid).weight_scale

    def use_for_goal(self, goalid: str, datasetid: str) -> int:
        """Attach a dataset to a goal (created when new); returns its ordinal. The goal's
        context is built by ``goals.Goals.context``."""
        check_goal_id(goalid)
        self.get(datasetid)
        return int(self.db.write("goal_use_dataset", goalid=goalid, datasetid=datasetid,
                                 replaces=None)[0]["ordinal"])


def check_goal_id(goalid: str) -> None:
    """A goal id is an indexed key: text of at most ``MAX_KEY_BYTES`` UTF-8 bytes (Neo4j
    refuses a longer one with an index error of its own).

    Raises:
        DatasetInputError: it is not a non-empty string of at most that size.
    """
    if not isinstance(goalid, str) or not goalid:
        raise DatasetInputError(f"a goal id must be a non-empty string, not {goalid!r:.40}")
    try:
        size = len(goalid.encode("utf-8"))
    except UnicodeEncodeError:
        raise DatasetInputError("a goal id must be valid Unicode text (it holds a lone "
                                "surrogate)") from None
    if size > MAX_KEY_BYTES:
        raise DatasetInputError(f"a goal id is {size} bytes long; the limit is MAX_KEY_BYTES "
                                f"= {MAX_KEY_BYTES} UTF-8 bytes (Neo4j cannot index longer "
                                "ids)")


def _check_session(session: str) -> None:
    """A session name becomes part of an indexed dataset id: valid text, a bounded size."""
    try:
        size = len(session.encode("utf-8"))
    except UnicodeEncodeError:
        raise DatasetInputError("a session name must be valid Unicode text (it holds a lone "
                                "surrogate)") from None
    if size > MAX_KEY_BYTES:
        raise DatasetInputError(f"a session name is {size} bytes long; the limit is "
                                f"MAX_KEY_BYTES = {MAX_KEY_BYTES} UTF-8 bytes (Neo4j cannot "
                                "index longer ids)")


def _check_create(node_flags: Mapping[str, Any], session: str, goal: str | None) -> None:
    """Refuse ``Datasets.create`` arguments before the transaction: an unknown weight scale,
    a session name that is empty, holds ``#`` or is no valid bounded key, a bad goal id."""
    if node_flags["weight_scale"] not in WEIGHT_SCALES:
        raise DatasetInputError(f"weight_scale must be one of {WEIGHT_SCALES}")
    if not session or "#" in session:
        raise DatasetInputError("a session name must be non-empty and contain no '#'")
    _check_session(session)
    if goal is not None:
        check_goal_id(goal)


def _add_members(tx: ManagedTransaction, datasetid: str,
                 pages: Iterable[Sequence[Fragment | Member]]) -> tuple[int, int]:
    """Link the pages' members to the dataset, ``_WRITE_CHUNK`` rows per statement; returns
    how many were linked and how many were given (an id not in the graph links nothing)."""
    added = given = 0
    for page in pages:
        fragment_rows, document_rows = _member_rows(page)
        given += len(fragment_rows) + len(document_rows)
        for statement, rows in (("dataset_add_fragments", fragment_rows),
                                ("dataset_add_documents", document_rows)):
            for start in range(0, len(rows), _WRITE_CHUNK):
                chunk = rows[start:start + _WRITE_CHUNK]
                added += int(run(tx, statement, datasetid=datasetid,
                                 rows=chunk)[0]["added"])
    return added, given


def _member(row: Record) -> Member:
    return Member(row["fragmentid"], row["documentid"], row["text"], float(row["weight"]),
                  row["source"], bool(row["hidden"]), row["original_score"],
                  row["rerank_text"] or "", bool(row["unscored"]), row["characters"])


def _pages(fragments: Iterable[Fragment | Member]) -> Iterator[list[Fragment | Member]]:
    """An iterator's members in lists of ``_WRITE_CHUNK`` (the last one shorter)."""
    page: list[Fragment | Member] = []
    for fragment in fragments:
        page.append(fragment)
        if len(page) >= _WRITE_CHUNK:
            yield page
            page = []
    if page:
        yield page


def _member_rows(fragments: Sequence[Fragment | Member]
                 ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    fragment_rows: list[dict[str, Any]] = []
    document_rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for f in fragments:
        if f.fragmentid in seen:
            continue
        seen.add(f.fragmentid)
        original = getattr(f, "original_score", None)
        row = {"id": f.fragmentid, "weight": float(f.score), "original_score": original,
               "unscored": True if getattr(f, "unscored", False) else None}
        is_stub = f.source == "category"
        (document_rows if is_stub else fragment_rows).append(row)
    return fragment_rows, document_rows
