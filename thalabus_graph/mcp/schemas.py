"""The typed outputs of the MCP tools: pydantic models, so each tool publishes an output
schema and returns structured content an agent can read field by field."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Warning_(BaseModel):
    """One warning about a query (``QueryWarning.to_dict``): an unknown category or ontology,
    a partial rerank, results a gate dropped, ... Every field a warning kind carries passes
    through (the schema allows more than the ones named here), so a new kind reaches the
    agent whole."""

    model_config = ConfigDict(extra="allow")

    kind: str = Field(description="what the warning is about, e.g. unknown_category_name, "
                      "unknown_category_value, unknown_ontology, case_mismatch, rerank")
    subject: str | None = Field(default=None, description="the term, value or phrase concerned")
    suggestion: str | None = Field(default=None,
                                   description="the stored spelling, when there is one")
    message: str = Field(description="one line for people")


class OutputCut(BaseModel):
    """What the output budget left out of a tool's answer, and how to get it."""

    budget: int = Field(description="the server's character budget per tool output")
    texts_cut_to: int | None = Field(default=None, description="longest text kept (characters); "
                                     "longer texts end in '…'")
    left_out: int = Field(default=0, description="items of this page not returned")
    note: str = Field(description="what was cut and how to get more")


class Paging(BaseModel):
    """Where a page of a longer list starts and where the next one does."""

    offset: int = Field(default=0, description="items skipped before this page")
    next_offset: int | None = Field(default=None, description="the offset of the next page (call "
                                    "again with it); null: nothing more")
    cut: OutputCut | None = Field(default=None, description="set when the output budget cut this "
                                  "answer")


class FragmentOut(BaseModel):
    """One retrieved fragment (or a document stub from a category filter: no text)."""

    fragmentid: str
    documentid: str
    score: float = Field(description="retrieval score in [0, 1], higher is better")
    source: str = Field(
        description="chapters, paragraphs, summaries, questions, keywords or category")
    text: str | None = None
    context: list[dict[str, Any]] | None = Field(
        default=None, description="the rows of the graph context asked for (query's context)")


class DocumentOut(BaseModel):
    """A document hit: its best fragment's score, its details and its matching fragments."""

    documentid: str
    score: float
    title: str | None = None
    ontology: str | None = None
    categories: dict[str, list[str]] = Field(default_factory=dict)
    fragments: list[FragmentOut] = Field(default_factory=list)
    context: list[dict[str, Any]] | None = Field(
        default=None, description="the rows of the graph context asked for (query's context)")


class QueryOutput(Paging):
    """What a query found, cut to ``limit``; ``total`` says how many there were."""

    query: str
    returned: str = Field(description="documents or fragments")
    total: int = Field(description="hits before the limit")
    documents: list[DocumentOut] = Field(default_factory=list)
    fragments: list[FragmentOut] = Field(default_factory=list)
    dataset_id: str | None = Field(default=None, description="the dataset written (create_dataset)")
    warnings: list[Warning_] = Field(default_factory=list)
    bookmarks: list[str] = Field(default_factory=list, description="Neo4j bookmarks after "
                                 "the call: another client waits for them to see the dataset")


class ExplainOutput(BaseModel):
    """The parsed query and the plan it would run, with estimates (nothing is searched)."""

    query: str = Field(description="the canonical form of the query")
    ast: dict[str, Any]
    plan: dict[str, Any]
    warnings: list[Warning_] = Field(default_factory=list)
    cut: OutputCut | None = Field(default=None, description="set when the output budget cut this "
                                  "answer")


class ValueOut(BaseModel):
    """One stored value of a category name and how many documents have it."""

    value: str
    documents: int


class CategoryOut(BaseModel):
    """A category name: its documents and its most common values (``more_values`` not
    listed)."""

    name: str
    documents: int = Field(description="documents with at least one of its values")
    values: list[ValueOut] = Field(default_factory=list)
    more_values: int = Field(default=0, description="values not listed (raise max_values)")


class OntologyOut(BaseModel):
    """An ontology id and how many documents are in it."""

    ontologyid: str
    documents: int


class CategoriesOutput(BaseModel):
    """The graph's category names and values, most documents first, for writing NAME=VALUE
    filters; the ontologies for ``ontology_id``."""

    ontology_id: str | None = Field(default=None, description="the ontology the categories are of "
                                    "(null: all documents)")
    documents: int = Field(description="documents in the graph")
    categories: list[CategoryOut] = Field(default_factory=list)
    more_categories: int = Field(default=0, description="names not listed (raise max_names)")
    ontologies: list[OntologyOut] = Field(default_factory=list)
    more_ontologies: int = 0
    cut: OutputCut | None = None


class MemberOut(BaseModel):
    """A dataset member: a fragment (or a document stub) with its weight."""

    fragmentid: str
    documentid: str
    score: float = Field(description="the member's weight, on the dataset's weight scale")
    source: str
    text: str | None = None
    hidden: bool = False
    original_score: float | None = Field(default=None, description="the retrieval score before "
                                         "reranking")
    unscored: bool = Field(False, description="a rerank failed for it: it kept its retrieval "
                           "weight and ranks after the scored members")


class DatasetOutput(Paging):
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
    reason: str | None = Field(default=None, description="why a rerank kept (part of) the order")
    failures: int | None = None
    lineage: list[str] = Field(default_factory=list, description="the parents, nearest first "
                               "(DERIVED_FROM), up to the query's dataset")
    members: list[MemberOut] = Field(default_factory=list)


class RerankOutput(Paging):
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


class GoalContextOutput(Paging):
    """The fragments assembled for a goal from its datasets, within a character budget."""

    goal_id: str
    datasets: list[str]
    fragments: list[MemberOut]
    characters: int
    truncated: bool
    fill_up_used: bool
    filled_from: list[str] = Field(default_factory=list)
    weight_scales: dict[str, str] = Field(default_factory=dict)


__all__ = ["CategoriesOutput", "CategoryOut", "DatasetOutput", "DocumentOut", "ExplainOutput",
           "FragmentOut", "GoalContextOutput", "MemberOut", "OntologyOut", "OutputCut", "Paging",
           "QueryOutput", "RerankOutput", "ValueOut", "Warning_"]
