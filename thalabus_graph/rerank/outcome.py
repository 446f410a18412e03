"""What branch-level reranking (``query --rerank``) did over one query, told truthfully.

Each AND / OR branch with a semantic clause is reranked on its own (``ThalabusGraph.
_rerank_branch``); a branch whose reranking failed keeps its retrieval scores, one that was
partly scored gives its unscored fragments the branch's lowest reranker score. This record adds
the branches up into the flags a dataset stored from the query carries (the same names
``rerank_dataset`` writes) and into one warning line for the caller:

- ``reranked``: some branch got reranker scores;
- ``reason``: None for a complete rerank, ``partial`` when a batch failed, a fragment went
  unscored or a branch was not reranked while another was, else why nothing was reranked
  (``no-semantic-query``; ``no-branch``: a semantic query without an AND / OR branch, which
  branch reranking leaves as it is; ``no-reranker``, ``failed``, ``empty``);
- ``weight_scale``: ``reranker`` when every branch was reranked, ``retrieval`` when none was,
  ``mixed`` when both happened (the weights of one dataset then come from both scales);
- ``failures`` (failed batches) and ``unscored`` (fragments no reply scored).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from thalabus_graph.rerank.rounds import RoundsResult


@dataclass
class BranchOutcomes:
    """The reranked branches of one query, added up.

    Example:
        >>> BranchOutcomes().flags()["reason"]
        'no-semantic-query'
    """

    attempted: int = 0
    reranked: int = 0
    failures: int = 0
    unscored: int = 0
    reasons: list[str] = field(default_factory=list)
    semantic: bool = False
    """The query has a semantic clause (``no-branch`` rather than ``no-semantic-query``)."""

    def add(self, result: RoundsResult, unscored: int, *, reason: str | None = None) -> None:
        """Record one branch's rerank (``reason`` overrides the result's, e.g. no reranker)."""
        self.attempted += 1
        self.reranked += int(result.reranked)
        self.failures += len(result.failures)
        self.unscored += unscored if result.reranked else 0
        why = reason or result.reason
        if why is not None and why not in self.reasons:
            self.reasons.append(why)

    @property
    def complete(self) -> bool:
        """Every branch reranked, every fragment scored, no batch failed."""
        return (self.attempted > 0 and self.reranked == self.attempted
                and not self.failures and not self.unscored)

    def flags(self) -> dict[str, Any]:
        """``reranked``, ``reason``, ``weight_scale``, ``failures``, ``unscored``."""
        reason: str | None
        if self.reranked == 0:
            reason = (self.reasons[0] if self.reasons
                      else "no-branch" if self.semantic else "no-semantic-query")
            scale = "retrieval"
        else:
            reason = None if self.complete else "partial"
            scale = "reranker" if self.reranked == self.attempted else "mixed"
        return {"reranked": self.reranked > 0, "reason": reason, "weight_scale": scale,
                "failures": self.failures, "unscored": self.unscored}

    def warning(self) -> str | None:
        """One line for the caller when the rerank was not complete, else None."""
        if self.complete:
            return None
        flags = self.flags()
        if not flags["reranked"]:
            return (f"--rerank: nothing was reranked ({flags['reason']}); the results keep "
                    "their retrieval scores")
        return (f"--rerank: partial: {self.reranked} of {self.attempted} branches reranked, "
                f"{self.failures} failed batches, {self.unscored} fragments unscored (they "
                "rank after the scored ones"
                + ("; unreranked branches keep retrieval scores)" if flags["weight_scale"]
                   == "mixed" else ")"))


__all__ = ["BranchOutcomes"]
