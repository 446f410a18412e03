"""Branch-level reranking (``automatically_rerank``): each AND / OR operand is reranked with
its own semantic clauses before the evaluator combines it (docs/architecture.md, "Evaluation
rules")."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence

from thalabus_graph.fragments import Fragment
from thalabus_graph.query import Node, rerank_query
from thalabus_graph.rerank import NoReranking, Reranker, ScoredFragment
from thalabus_graph.rerank.outcome import BranchOutcomes
from thalabus_graph.rerank.policies import ranked
from thalabus_graph.rerank.rounds import rerank_fragments
from thalabus_graph.settings import Settings

logger = logging.getLogger("thalabus_graph.engine")


class BranchRerank:
    """Reranks one branch's fragments with the branch's own query (a ``BranchReranker``)."""

    def __init__(self, reranker: Reranker, settings: Settings,
                 outcomes: BranchOutcomes | None = None) -> None:
        self.reranker = reranker
        self.settings = settings
        self.outcomes = outcomes
        """What each branch's rerank did, added up for the result's flags and warnings."""

    def __call__(self, node: Node, fragments: list[Fragment]) -> list[Fragment]:
        """Branch-level reranking: the branch's semantic clauses score its fragments.

        One scale per branch: when the reranker scored any fragment of the branch, every
        fragment it did not score (a category stub, a failed batch, an id missing from the
        reply) takes the float just below the branch's lowest reranker score, so it ranks
        after every scored fragment whatever its id (the lowest score itself would tie, and
        the fragment id would decide) and AND/OR never compare a retrieval score with a
        reranker score. When nothing was scored (no semantic clause, a failure), the branch
        keeps its retrieval scores whole.
        """
        query = rerank_query(node)
        if not query:
            return fragments
        scorable = [f for f in fragments if f.text]
        result = rerank_fragments([(f.fragmentid, f.text or "", f.score) for f in scorable],
                                  query, self.reranker, KeepAll(),
                                  round_size=self.settings.max_reranking_input_frag)
        scores = {f.fragmentid: f.score for f in result.fragments[: result.scored]}
        if self.outcomes is not None:
            no_reranker = "no-reranker" if isinstance(self.reranker, NoReranking) else None
            self.outcomes.add(result, sum(1 for f in scorable if f.fragmentid not in scores),
                              reason=no_reranker)
        if not result.reranked:
            logger.info("branch %s: not reranked (%s); retrieval scores kept", query,
                        result.reason)
            return fragments
        if not scores:
            return fragments
        floor = math.nextafter(min(scores.values()), -math.inf)
        unscored = sum(1 for f in fragments if f.fragmentid not in scores)
        if unscored:
            logger.info("branch %s: %d of %d fragments unscored rank below the branch's "
                        "lowest reranker score %.6g", query, unscored, len(fragments), floor)
        return [f.with_score(scores.get(f.fragmentid, floor)) for f in fragments]


class KeepAll:
    """Selection policy that keeps every scored fragment (branch reranking rescores only)."""

    def select(self, scored: Sequence[ScoredFragment]) -> list[ScoredFragment]:
        return ranked(scored)

