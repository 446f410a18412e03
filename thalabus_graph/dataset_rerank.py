"""Reranking a stored dataset (``ThalabusGraph.rerank_dataset``): its members read one round
at a time, reranked with the positive semantic clauses of its query, selected by a policy, and
written back as ``{session}#rerank_{n}`` with flags that say how its weights came about
(docs/architecture.md, "Results, datasets and reranking").

It sits with the datasets: it reads and writes them around the reranking code, which never sees
the graph.

The rerank query is the positive semantic clauses of ``query_text`` (default: the
query the dataset was made from, ``DatasetInfo.stored_query``, so a rerank reranks
again without one) joined by " AND "; with none, the order is kept and the result
says so. The new dataset stores that text as ``query`` and the query it came from as
``source_query``. With ``goal``, the goal uses the new dataset (linked in the same
transaction, in its parent's place when the goal used the parent). Members are read
one round at a time. The merged rounds are capped at ``max_output`` (default
``MAX_RERANKING_OUTPUT_FRAG``, or the policy's own ``max_output_frag``), the tiers'
document coverage kept.

The new Dataset node records how its weights came about: ``reranked``, ``reason``
(``no-semantic-query`` | ``no-reranker`` | ``failed`` | ``empty`` | ``partial``),
``failures``, ``unscored``, ``capped`` and ``weight_scale`` (``reranker`` |
``retrieval`` | ``mixed``). A partly failed rerank keeps the unscored members after
the scored ones, in their retrieved order, with their retrieval weights.

``clauses`` (default ``RERANK_CLAUSES``): ``joined`` asks the reranker the clauses
joined by " AND "; ``geometric`` / ``minimum`` score every member against each clause
and combine by that AND rule (``rerank.clauses``); recorded as ``clauses``. A member
some clause could not score stays unscored (``partial``), as in a joined rerank.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from thalabus_graph.datasets import Datasets, Member
from thalabus_graph.query import parse, rerank_query, semantic_clauses, serialize
from thalabus_graph.rerank import (
    NoReranking,
    Passage,
    Reranker,
    ScoredFragment,
    SelectionPolicy,
    ThresholdWithTiers,
)
from thalabus_graph.rerank.clauses import PerClauseReranker, clause_reranker
from thalabus_graph.rerank.rounds import rerank_in_rounds_sync
from thalabus_graph.settings import Settings

logger = logging.getLogger("thalabus_graph.engine")


@dataclass(frozen=True)
class RerankResult:
    """A reranked dataset: its id, the surviving members and whether the order was computed."""

    dataset_id: str
    """The new dataset, ``{session}#rerank_{n}``, ``DERIVED_FROM`` ``parent_id``."""
    parent_id: str
    query: str
    """What the reranker was asked: the positive semantic clauses joined by " AND "."""
    fragments: list[ScoredFragment]
    """The members written, best first (scored ones, then unscored in retrieved order)."""
    reranked: bool
    reason: str | None
    """Why the order was kept or partly kept (`RoundsResult.reason`); None when complete."""
    rounds: int
    failures: int
    """Failed scoring batches over all rounds."""
    weight_scale: str = "reranker"
    """``reranker``, ``retrieval`` (order kept) or ``mixed`` (partly failed)."""
    unscored: int = 0
    capped: int = 0
    """Selected fragments the ``MAX_RERANKING_OUTPUT_FRAG`` cap removed."""
    bookmarks: tuple[str, ...] = ()
    """The graph object's bookmarks once the new dataset is written (see ``QueryResult``)."""
    clauses: str = "joined"
    """How the clauses were reranked: ``joined``, or per clause ``geometric`` | ``minimum``
    (``joined`` whenever there was nothing to combine: one clause, or no reranker)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"dataset_id": self.dataset_id, "parent_id": self.parent_id,
                "query": self.query, "reranked": self.reranked, "reason": self.reason,
                "rounds": self.rounds, "failures": self.failures,
                "weight_scale": self.weight_scale, "unscored": self.unscored,
                "capped": self.capped, "clauses": self.clauses,
                "fragments": [f.to_dict() for f in self.fragments],
                "bookmarks": list(self.bookmarks)}


def rerank_dataset(datasets: Datasets, reranker: Reranker, settings: Settings, dataset_id: str,
                   query_text: str | None = None, *, session: str | None = None,
                   policy: SelectionPolicy | None = None, max_output: int | None = None,
                   goal: str | None = None, clauses: str | None = None) -> RerankResult:
    """Rerank ``dataset_id`` in rounds and write ``{session}#rerank_{n}``; the result carries
    no bookmarks (``ThalabusGraph.rerank_dataset`` adds them).

    Raises:
        ConfigurationError: raised by the reranker (never written as a degraded dataset),
            or an unknown ``clauses``.
    """
    info = datasets.get(dataset_id)
    node = parse(info.stored_query() if query_text is None else query_text)
    rerank_text = rerank_query(node)
    no_reranker = isinstance(reranker, NoReranking)
    scorer = clause_reranker(reranker, semantic_clauses(node),
                             settings.rerank_clauses if clauses is None else clauses)
    mode = scorer.rule if isinstance(scorer, PerClauseReranker) else "joined"
    s = settings
    stubs: set[str] = set()  # filled while the rounds are read, one page at a time

    def rounds() -> Iterator[list[Passage]]:
        for page in datasets.pages(dataset_id, page_size=s.max_reranking_input_frag,
                                   max_chars=s.max_rerank_chars):
            stubs.update(m.fragmentid for m in page if m.source == "category")
            yield [Passage(m.fragmentid, m.rerank_text or m.text or "", m.score, m.documentid)
                   for m in page]

    chosen = policy or ThresholdWithTiers.from_settings(s)
    cap = max_output or getattr(chosen, "max_output_frag", s.max_reranking_output_frag)
    min_docs = getattr(chosen, "min_output_doc", s.min_reranking_output_doc)
    result = rerank_in_rounds_sync(rounds(), "" if no_reranker else rerank_text,
                                   scorer, chosen, max_output=cap,
                                   min_output_doc=min_docs)
    reason = "no-reranker" if no_reranker and rerank_text else result.reason
    scale = ("retrieval" if not result.reranked
             else "mixed" if result.unscored_ids else "reranker")
    unscored = set(result.unscored_ids)
    members = [Member(f.fragmentid, f.documentid, f.text, f.score,
                      "category" if f.fragmentid in stubs else "fragment",
                      original_score=f.original_score,
                      unscored=result.reranked and f.fragmentid in unscored)
               for f in result.fragments]
    flags: dict[str, Any] = {"reranked": result.reranked, "reason": reason,
             "failures": len(result.failures), "weight_scale": scale,
             "unscored": len(unscored) if result.reranked else 0, "capped": result.capped,
             "source_query": serialize(node), "clauses": mode}
    new_id = datasets.create(members, session=session or info.session,
                                  query=rerank_text, kind="rerank",
                                  derived_from=dataset_id, flags=flags, goal=goal)
    log = logger.info if result.reranked and reason is None else logger.warning
    log("rerank %s -> %s: %d of %d members kept, reranked=%s, reason=%s, failures=%d, "
        "scale=%s, clauses=%s", dataset_id, new_id, len(members), info.members,
        result.reranked, reason, len(result.failures), scale, mode)
    return RerankResult(new_id, dataset_id, rerank_text, list(result.fragments),
                        result.reranked, reason, result.rounds, len(result.failures), scale,
                        int(flags["unscored"]), result.capped, clauses=mode)
