"""The one runner of the plan's statements: it runs a named Cypher statement for a ``Step``
and books the step's statement, rows, milliseconds and (profiled) db hits.

Every read of the searches and the plan goes through ``Runner``: a plain read, a read some
threads started ahead (``prefetch``), a streamed read, or a read no reader shows (the counts
and normalisations a decision needs). The steps it books land in ``steps``, the list of the
plan node being run (the compiler and the evaluator point it at that node's list), so explain
and profile show what ran where.
"""

from __future__ import annotations

import contextvars
import functools
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from thalabus_graph.graph import cypher_library
from thalabus_graph.graph.database import Database, Record, mapped_errors
from thalabus_graph.plan.steps import Step, StepKind, TextSearch, VectorSearch
from thalabus_graph.settings import Settings

STREAM_FETCH_SIZE = 500
"""Records the driver fetches at a time for a streamed result (``Runner.stream``): the most a
stream holds in memory, whatever its length."""
DETAILED = frozenset({"search_vector", "search_vector_exact", "search_vector_exact_guarded",
                      "search_vector_in_index",
                      "search_fulltext", "search_fulltext_candidates"})
"""Statements whose rows carry their document's details with ``$details`` (``details``)."""
PLAIN = DETAILED | {"document_category_keys", "document_languages", "search_category"}
"""Statements that return plain values only (strings, numbers, lists and maps of them; no
node): their records skip the driver's recursive ``data()`` (~10 ms on 200 rows with
details)."""
TEXT_BOUNDED = frozenset({"search_phrase", "search_phrase_filtered", "search_vector",
                          "search_vector_in_index", "search_vector_exact",
                          "search_vector_exact_guarded", "search_fulltext",
                          "search_fulltext_candidates"})
"""Statements that return fragment texts cut on the server to ``$max_text`` characters
(``Runner.text_cap``): one huge chapter then costs every query that meets it that many
characters, not its whole text, in the server's memory, on the wire and in the result."""


BatchKey = tuple[str, str, str]
"""One search of a batched call: its row kind, source and role (``search_phrase_filtered``)."""
EXACT, INDEX, TEXT = "exact", "index", "filtered_text"
"""The row kinds of the batched searches (``search_phrase_filtered``)."""


def batch_key(search: VectorSearch | TextSearch) -> BatchKey:
    """The key of a batched search's rows (``Runner.take``): its row kind, source and
    role, as the call returns them and the search asks for them."""
    if isinstance(search, TextSearch):
        return (TEXT, search.source, search.role)
    return (search.path, search.source.source, search.role)


@dataclass
class Batch:
    """The rows of one call that ran several searches (``Runner.run_batch``), by search, each
    taken once by the search it ran for; the call's time and db hits go to the first
    step that takes its rows."""

    name: str
    rows: dict[BatchKey, list[Record]]
    ms: float
    db_hits: int
    booked: bool = False


PHRASE_KEY: BatchKey = ("phrase", "", "statistics")
"""The batched call's unrestricted statistics (``search_phrase``'s rows)."""
PHRASE_KINDS = frozenset({"size", "semantic", "text", "background"})


class CarriedRead(Protocol):
    """A query's vocabulary read carried by its first statement (``search.vocabulary``'s
    ``PlannedVocabulary``): the runner runs the carrying statement, the read judges it."""

    @property
    def pending(self) -> bool:
        """Whether no statement has carried the read yet."""
        ...

    def carry(self, name: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The statement ``name`` carrying the read, and its parameters."""
        ...

    def taken(self, rows: list[Record]) -> list[Record]:
        """The carrying statement's rows as ``name`` alone returns them."""
        ...

    def settle(self, runner: Runner) -> Mapping[str, Any]:
        """The row read with the query; read now (``runner.alone``) when none carried it."""
        ...


class Runner:
    """Runs named statements for steps, timed, profiled when asked: the one way the search
    layer reads the graph.

    Attributes:
        steps: where new steps are booked (the plan node being compiled or run).
        details: documents' details read along with search hits (documentid -> row), so the
            caller returning documents reads only the missing ones.
        prefetched: phrase calls started ahead, by (statement, phrase, with text).
        batches: the batched calls whose rows the searches of the phrase being run take.
        vocabulary: the query's vocabulary read its first statement carries
            (``search.vocabulary``; None: the query read it before planning, or has
            none).
        text_cap: the longest fragment text a search statement returns (``$max_text`` of
            the ``TEXT_BOUNDED`` statements; ``MAX_RESULT_TEXT_CHARS``).
    """

    def __init__(self, db: Database, *, profile: bool = False,
                 vocabulary: CarriedRead | None = None,
                 text_cap: int = Settings.max_result_text_chars) -> None:
        self.db = db
        self.text_cap = text_cap
        self.profile = profile
        self.vocabulary = vocabulary
        self.steps: list[Step] = []
        self.details: dict[str, list[Any]] = {}
        self.prefetched: dict[tuple[str, str, bool], Future[list[Record]]] = {}
        self.batches: list[Batch] = []

    def step(self, kind: StepKind, detail: dict[str, Any]) -> Step:
        """A new step, booked in ``steps``."""
        step = Step(kind, detail)
        self.steps.append(step)
        return step

    def quiet(self, name: str, /, **params: Any) -> list[Record]:
        """A read no step shows (the node counts, the scope's size, a normalisation)."""
        return self._rows(name, self._capped(name, params), plain=False)

    def _capped(self, name: str, params: dict[str, Any]) -> dict[str, Any]:
        """``params`` with the text bound of a ``TEXT_BOUNDED`` statement."""
        return {**params, "max_text": self.text_cap} if name in TEXT_BOUNDED else params

    def _rows(self, name: str, params: dict[str, Any], *, plain: bool) -> list[Record]:
        """The rows of the read ``name``, in the statement that carries the query's
        vocabulary read while that is pending (``PlannedVocabulary.run``)."""
        if self.vocabulary is not None and self.vocabulary.pending:
            text, sent = self.vocabulary.carry(name, params)
            return self.vocabulary.taken(self.db.read_text(
                text, sent, plain=plain, what=f"{name} (with category_vocabulary)"))
        return self.alone(name, params, plain=plain)

    def alone(self, name: str, params: dict[str, Any], *, plain: bool = False
              ) -> list[Record]:
        """A read of its own: no step shows it and no vocabulary read rides on it (the
        vocabulary read itself, the graph object's index and language state, the details
        of documents returned). ``plain``: the statement returns plain values only."""
        params = self._capped(name, params)
        return self.db.read_plain(name, **params) if plain else self.db.read(name, **params)

    def read(self, step: Step, name: str, /, *, plain: bool = False,
             ahead: Future[list[Record]] | None = None, **params: Any) -> list[Record]:
        """Run a named read for ``step`` (timed, profiled when asked). ``plain``: the
        statement returns only plain values (strings, numbers, lists of them), so records
        skip the driver's recursive ``data()`` conversion (milliseconds on long lists).
        ``ahead``: the call already started (``prefetch``); its rows are waited for and
        booked on ``step`` like a call made here."""
        params = self._capped(name, params)
        start = time.perf_counter()
        if ahead is not None:
            rows = ahead.result()
            step.detail["prefetched"] = "started with the query's other phrases"
        elif self.profile:
            rows, hits = self.db.read_profiled(name, **params)
            step.db_hits += hits
        else:
            rows = self._rows(name, params, plain=plain or name in PLAIN)
        step.ms += (time.perf_counter() - start) * 1000
        step.rows += len(rows)
        step.cypher = name
        if name in DETAILED:
            self.details.update((r["details"][0], r["details"]) for r in rows if r["details"])
        return rows

    def read_composed(self, step: Step, text: str, what: str, /, **params: Any
                      ) -> list[Record]:
        """Run a statement composed of a named one and a checked slot (a graph-defined
        category's pattern) for ``step``, timed; ``what`` names it in the step and errors."""
        start = time.perf_counter()
        rows = self.db.read_text(text, params, plain=True, what=what)
        step.ms += (time.perf_counter() - start) * 1000
        step.rows += len(rows)
        step.cypher = what
        return rows

    def run_batch(self, name: str, rows_of: dict[BatchKey, list[Record]], role: str, /,
                  **params: Any) -> None:
        """Run the read ``name``, one call serving several searches of ``role``, and keep its
        rows for them (``take``). ``rows_of`` names the searches (empty lists); each row of
        the call is appended to its search's list by its ``kind`` and ``source``, the
        unrestricted statistics' rows (kinds size, semantic, text) to the ``PHRASE_KEY``
        list."""
        params = self._capped(name, params)
        start = time.perf_counter()
        hits = 0
        if self.profile:
            rows, hits = self.db.read_profiled(name, **params)
        else:
            rows = self._rows(name, params, plain=True)
        for row in rows:
            key = (PHRASE_KEY if row["kind"] in PHRASE_KINDS
                   else (str(row["kind"]), str(row["source"]), role))
            rows_of.setdefault(key, []).append(row)
        self.batches.append(Batch(name, rows_of, (time.perf_counter() - start) * 1000, hits))

    def take(self, step: Step, key: BatchKey) -> list[Record] | None:
        """The rows the batched call returned for the search of ``step`` (None when no
        batched call ran it), booked on ``step`` as its statement's rows would be."""
        batch = next((b for b in self.batches if key in b.rows), None)
        if batch is None:
            return None
        rows = batch.rows.pop(key)
        if not batch.booked:
            step.ms += batch.ms
            step.db_hits += batch.db_hits
            batch.booked = True
        step.cypher = batch.name
        step.detail["round_trip"] = (f"{batch.name}: one call for the phrase's searches "
                                     "(ms and db_hits on the first)")
        if key == PHRASE_KEY:
            return rows
        out: list[Record] = []
        for row in rows:
            self.details.update((entry[0], entry) for entry in row["details"])
            out += [{"fragmentid": f, "documentid": d, "text": t, "score": s, "details": None}
                    for f, d, t, s in zip(row["fragmentids"], row["documentids"],
                                          row["texts"], row["scores"], strict=True)]
        step.rows += len(out)
        return out

    def end_batch(self) -> None:
        """Forget the batched calls' rows (the phrase they ran for is done)."""
        self.batches = []

    def stream(self, step: Step, name: str, /, **params: Any) -> Iterator[tuple[Any, ...]]:
        """Run the read ``name`` and yield its records' values one by one as the driver
        fetches them (in batches of its fetch size), so a result of any length is never held
        as a list; ``step`` gets the statement, rows and time (including the consumer's)."""
        step.cypher = name
        if self.vocabulary is not None:  # a stream's columns come in order: the read goes first
            self.vocabulary.settle(self)
        text = cypher_library.load(name, params)
        start = time.perf_counter()
        try:
            with mapped_errors(name), self.db.streamed(
                    text, params, fetch_size=STREAM_FETCH_SIZE) as records:
                for record in records:
                    step.rows += 1
                    yield tuple(record.values())
        finally:
            step.ms += (time.perf_counter() - start) * 1000

    def prefetch(self, name: str, calls: Sequence[tuple[tuple[str, bool], dict[str, Any]]]
                 ) -> None:
        """Start several calls of ``name`` at once, each in its own session, keyed for the
        ``read`` that takes each one (``ahead``)."""
        with ThreadPoolExecutor(max_workers=len(calls)) as pool:
            for key, params in calls:
                # each call in a copy of this context: the query's deadline goes along
                read = functools.partial(self.db.read_plain, name, **self._capped(name, params))
                self.prefetched[name, *key] = pool.submit(contextvars.copy_context().run, read)

    @staticmethod
    def share_call(steps: Sequence[Step], name: str) -> None:
        """Mark the steps one call of ``name`` served: its time and db hits stay on the first
        (``read`` put them there), each step names the shared call, rows are set per step."""
        steps[0].rows = 0
        for step in steps:
            step.cypher = name
            step.detail["round_trip"] = (f"{name}: one call for {len(steps)} searches "
                                         f"(ms and db_hits on the first)")
