"""``QueryWarning``: one finding about a query that the query's result carries (a category or
ontology that matches nothing, phrase results a score rule dropped), as a value every layer
that finds one can make, from the plan's vocabulary check down to the calibrated scale."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class QueryWarning:
    """One finding about a query: what is wrong, where, and the stored spelling if any.

    Attributes:
        kind: ``unknown_category_name``, ``unknown_category_value``, ``unknown_ontology``,
            ``case_mismatch``, ``rerank``, or the score rules' ``scores`` and
            ``embedding_model`` (``scale.DroppedWarning`` adds its fields).
        subject: the term as written (``difficulty``, ``DIFFICULTY=Easy``, the ontology id).
        suggestion: the stored spelling for a case mismatch or the closest stored spelling of
            a typo (``NAME=value`` for a value), else None.
        message: one line for people.
    """

    kind: str
    subject: str
    suggestion: str | None
    message: str

    def __str__(self) -> str:
        return self.message

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"kind": self.kind, "subject": self.subject, "suggestion": self.suggestion,
                "message": self.message}
