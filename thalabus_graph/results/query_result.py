"""What a query returns: ``QueryResult``, the fragments or documents with the datasets
written, the executed plan, the warnings, the bookmarks and the rerank flags."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from thalabus_graph.fragments import Fragment
from thalabus_graph.query_warning import QueryWarning
from thalabus_graph.results.documents import DocumentHit
from thalabus_graph.results.plan_view import Plan


@dataclass(frozen=True)
class QueryResult:
    """What a query returned: fragments (or documents), the dataset ids written, the plan, and
    warnings: category filters or an ontology that match no stored document, a partial
    rerank, and each phrase whose fragments the calibrated scale removed or kept with doubt
    (``scale.DroppedWarning``: kind ``scores``, the phrase, how many fragments dropped, its
    best cosine, the rule)."""

    query: str
    fragments: list[Fragment]
    documents: list[DocumentHit] | None = None
    dataset_ids: list[str] = field(default_factory=list)
    plan: Plan | None = None
    """The executed plan when profiled; a dict that prints as the CLI's tree."""
    warnings: list[QueryWarning] = field(default_factory=list)
    bookmarks: tuple[str, ...] = ()
    """The graph object's bookmarks after the query (its dataset written, when asked): hand
    them to another process's ``ThalabusGraph`` so its reads see this state."""
    rerank: dict[str, Any] | None = None
    """With ``automatically_rerank``: ``BranchOutcomes.flags()`` (``reranked``, ``reason``,
    ``weight_scale``, ``failures``, ``unscored``); a partial or failed rerank is also a
    warning of kind ``rerank``."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``documents`` when documents were asked for, else ``fragments``; ``plan``
        only when profiled; ``rerank`` only when reranking was asked for."""
        out: dict[str, Any] = {"query": self.query, "dataset_ids": self.dataset_ids,
                               "warnings": [w.to_dict() for w in self.warnings],
                               "bookmarks": list(self.bookmarks)}
        if self.rerank is not None:
            out["rerank"] = self.rerank
        if self.documents is not None:
            out["documents"] = [d.to_dict() for d in self.documents]
        else:
            out["fragments"] = [f.to_dict() for f in self.fragments]
        return out if self.plan is None else {**out, "plan": self.plan}
