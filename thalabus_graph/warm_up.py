"""Run each search path once, so the first user queries do not wait for Neo4j to plan them:
after a bulk ingest (``ThalabusGraph.ingest``) and when asked (``ThalabusGraph.warm_up``,
``thalabus-graph warm-up``), as after a server start, whose plan cache is empty.

Neo4j plans a Cypher statement the first time it runs it (and again once the graph's
statistics have moved far from those it planned with, as after a large load), and keeps the
plan until the server stops or the schema changes. The search statements are long: planning
one takes 0.1-3 s on a warm server (the composed filtered phrase the longest) and up to 8 s
on a freshly started one, which the first query of each shape paid after a load of 200,000
chapters, and after a restart even on the 31-document sample corpus (5-10 s each).
``warm_up`` runs a few queries of every form through the ordinary query path
(a phrase; a phrase AND a common and a rare category, AND NOT one, AND a nested filter; two
phrases OR'd; the phrase as a full-text search; a category alone), scoped to the loaded
ontology and unscoped, with and without a ``limit``, each twice (asked again, a filtered
query's first statement carries its vocabulary read: ``search.vocabulary``). Their
vector is a stored chapter's (no model runs, whatever the embedder) and their text that
chapter's first words, long enough for its language to be detected, so the full-text index
of its language runs too. Nothing is written; a failure is logged and reported, never raised
(after an ingest, the ingest has succeeded).
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from thalabus_graph.embeddings import Vectors
from thalabus_graph.errors import ThalabusError
from thalabus_graph.progress import NoProgress, Progress
from thalabus_graph.query.ast import And, Category, Node, Not, Or, Semantic, Text
from thalabus_graph.query.serialize import serialize

if TYPE_CHECKING:
    from thalabus_graph.engine import ThalabusGraph

logger = logging.getLogger(__name__)

MIN_DOCUMENTS = 1000
"""An ingest that wrote at least this many documents warms the search plans up: smaller
loads leave the statistics near those the cached plans were made with."""
PHRASE_WORDS = 8
"""Words of the sample chapter's text a warm-up phrase takes."""
WARM_UP_LIMIT = 10
"""The ``limit`` of the sized-pool queries (the adapters' typical request)."""


@dataclass
class WarmUp:
    """What the warm-up ran: queries, seconds, and why it stopped early (empty if it did
    not)."""

    queries: int = 0
    seconds: float = 0.0
    problem: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: queries, seconds, problem."""
        return {"queries": self.queries, "seconds": round(self.seconds, 3),
                "problem": self.problem}


class StoredVector:
    """An embedder that answers every text with one stored vector: the warm-up's queries
    need a vector of the graph's dimension, not a meaning."""

    def __init__(self, vector: Sequence[float], model: str) -> None:
        self.vector = np.asarray(vector, dtype=np.float32)
        self.model = model

    @property
    def dimensions(self) -> int:
        return int(self.vector.shape[0])

    @property
    def model_id(self) -> str:
        return self.model

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return np.tile(self.vector, (len(texts), 1))

    embed_passages = embed_queries


def queries(phrase: str, other: str, common: Category | None, rare: Category | None
            ) -> list[Node]:
    """The warm-up's query forms, over the sample's phrases and categories."""
    first, second = Semantic(phrase), Semantic(other)
    forms: list[Node] = [first, Or(first, second), Text(phrase)]
    for category in (common, rare):
        if category is not None:
            forms += [And(first, category), category]
    if common is not None:
        forms.append(And(first, Not(common)))
        if rare is not None:
            forms.append(And(first, Or(rare, And(common, Not(rare)))))
    return forms


def warm_up(graph: ThalabusGraph, *, progress: bool = False) -> WarmUp:
    """Run the warm-up queries on ``graph``'s database (see the module docstring);
    ``progress``: show how many of them ran, with a rate and an ETA (``thalabus_graph.progress``:
    a bar when stderr is a terminal, else log lines)."""
    from thalabus_graph.engine import ThalabusGraph

    report = WarmUp()
    began = time.perf_counter()
    bar: Progress | NoProgress = NoProgress()
    try:
        sample = graph.db.read_plain("warm_up_sample")
        if not sample or sample[0]["vector"] is None:
            return report
        row: dict[str, Any] = sample[0]
        words = str(row["text"] or "").split()
        phrase = " ".join(words[:PHRASE_WORDS]) or "warm up"
        other = " ".join(words[PHRASE_WORDS:2 * PHRASE_WORDS]) or phrase + " again"
        common = _category(row["common"])
        rare = _category(row["rare"])
        # the stored vector stands in for the graph's own embedder (its model id, which a
        # query compares with the graph's; no model is loaded for it)
        probe = ThalabusGraph(graph.db, settings=graph.settings,
                              embedder=StoredVector(row["vector"], graph.embedder.model_id))
        # each form twice: asked again, a filtered query's search carries its vocabulary read,
        # another statement to plan (search.vocabulary)
        runs = [(serialize(node), ontology, limit)
                for ontology in dict.fromkeys([row["ontologyid"], None])
                for node in queries(phrase, other, common, rare)
                for limit in (None, WARM_UP_LIMIT) for _ in range(2)]
        if progress:
            bar = Progress(len(runs), label="warm-up", unit="queries", rate_unit="query",
                           terminal=sys.stderr.isatty())
        for text, ontology, limit in runs:
            probe.query(text, ontology_id=ontology, limit=limit)
            report.queries += 1
            bar.advance(1)
    except ThalabusError as exc:
        report.problem = str(exc)
        logger.warning("the search warm-up stopped: %s", exc)
    finally:
        bar.close()
    report.seconds = time.perf_counter() - began
    logger.info("warmed the search plans up with %d queries in %.2f s",
                report.queries, report.seconds)
    return report


def _category(pair: Sequence[str] | None) -> Category | None:
    return Category(pair[0], (pair[1],)) if pair else None
