"""The typed outputs of the MCP tools: pydantic models, so each tool publishes an output
schema and returns structured content an agent can read field by field."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class Warning_(BaseModel):
    """A category name, value or ontology that no stored document has."""

    kind: str = Field(description="what is unknown: category, value or ontology")
    subject: str = Field(description="the unknown name or value as written")
    suggestion: str | None = Field(None, description="the stored spelling, when only the "
                                   "letter case differs")
    message: str


class FragmentOut(BaseModel):
    """One retrieved fragment (or a document stub from a category filter: no text)."""

    fragmentid: str
    documentid: str
    score: float = Field(description="retrieval score in [0, 1], higher is better")
    source: str = Field(
        description="chapters, paragraphs, summaries, questions, keywords or category")
    text: str | None = None


class DocumentOut(BaseModel):
    """A document hit: its best fragment's score, its details and its matching fragments."""

    documentid: str
    score: float
    title: str | None = None
    ontology: str | None = None
    categories: dict[str, list[str]] = Field(default_factory=dict)
    fragments: list[FragmentOut] = Field(default_factory=list)


class QueryOutput(BaseModel):
    """What a query found, cut to ``limit``; ``total`` says how many there were."""

    query: str
    returned: str = Field(description="documents or fragments")
    total: int = Field(description="hits before the limit")
    documents: list[DocumentOut] = Field(default_factory=list)
    fragments: list[FragmentOut] = Field(default_factory=list)
    dataset_id: str | None = Field(None, description="the dataset written (create_dataset)")
    warnings: list[Warning_] = Field(default_factory=list)
    bookmarks: list[str] = Field(default_factory=list, description="Neo4j bookmarks after "
                                 "the call: another client waits for them to see the dataset")


class ExplainOutput(BaseModel):
    """The parsed query and the plan it would run, with estimates (nothing is searched)."""

    query: str = Field(description="the canonical form of the query")
    ast: dict[str, Any]
    plan: dict[str, Any]
    warnings: list[Warning_] = Field(default_factory=list)


class MemberOut(BaseModel):
    """A dataset member: a fragment (or a document stub) with its weight."""

    fragmentid: str
    documentid: str
    score: float = Field(description="the member's weight, on the dataset's weight scale")
    source: str
    text: str | None = None
    hidden: bool = False
    original_score: float | None = Field(None, description="the retrieval score before "
                                         "reranking")
    unscored: bool = Field(False, description="a rerank failed for it: it kept its retrieval "
                           "weight and ranks after the scored members")


class DatasetOutput(BaseModel):
    """A dataset: how it was made, its members (best first) and where it came from."""

    dataset_id: str
    kind: str = Field(description="query, rerank, ...")
    query: str | None
    session: str
    created_at: str
    members_total: int
    hidden: int
    weight_scale: str = Field(description="retrieval, reranker or mixed")
    reranked: bool | None = None
    reason: str | None = Field(None, description="why a rerank kept (part of) the order")
    failures: int | None = None
    lineage: list[str] = Field(default_factory=list, description="the parents, nearest first "
                               "(DERIVED_FROM), up to the query's dataset")
    members: list[MemberOut] = Field(default_factory=list)


class RerankOutput(BaseModel):
    """A reranked dataset written as a new dataset derived from the parent."""

    dataset_id: str
    parent_id: str
    query: str = Field(description="what the reranker was asked")
    reranked: bool
    degraded: bool = Field(description="true when the order was kept or partly kept")
    reason: str | None
    rounds: int
    failures: int
    weight_scale: str
    unscored: int
    capped: int
    members_total: int
    members: list[MemberOut] = Field(default_factory=list)
    bookmarks: list[str] = Field(default_factory=list)


class GoalContextOutput(BaseModel):
    """The fragments assembled for a goal from its datasets, within a character budget."""

    goal_id: str
    datasets: list[str]
    fragments: list[MemberOut]
    characters: int
    truncated: bool
    fill_up_used: bool
    filled_from: list[str] = Field(default_factory=list)
    weight_scales: dict[str, str] = Field(default_factory=dict)


__all__ = ["DatasetOutput", "DocumentOut", "ExplainOutput", "FragmentOut",
           "GoalContextOutput", "MemberOut", "QueryOutput", "RerankOutput", "Warning_"]
