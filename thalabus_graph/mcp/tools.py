"""The MCP tools over one ``ThalabusGraph``: typed inputs, typed outputs, errors as tool errors.

Each public coroutine is one tool; its parameters (with their descriptions) become the tool's
input schema and its return model the output schema. The engine is synchronous, so every call
runs in a worker thread and the event loop keeps serving other clients. Our errors become
``ToolError`` (the client gets ``isError`` and the message: a syntax error with its caret
display, an unknown category with its "did you mean"), so a bad call never ends the server.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, TypeVar

import anyio.to_thread
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from thalabus_graph.datasets import Member
from thalabus_graph.engine import DocumentHit, ThalabusGraph
from thalabus_graph.errors import ThalabusError, ThalabusSyntaxError
from thalabus_graph.fragments import Fragment
from thalabus_graph.mcp.schemas import (
    DatasetOutput,
    DocumentOut,
    ExplainOutput,
    FragmentOut,
    GoalContextOutput,
    MemberOut,
    QueryOutput,
    RerankOutput,
    Warning_,
)

T = TypeVar("T")
TEXT_CHARS = 2000
"""Longest fragment text returned; longer texts are cut (with "…") to spare the agent's
context. The full text stays in the graph."""
MAX_LIMIT = 200
LINEAGE_DEPTH = 32
"""Most parents followed for a dataset's lineage (reranks of reranks)."""
WRITES_DISABLED = ("writes are disabled on this server (read-only mode): restart it with "
                   "`thalabus-graph mcp --allow-writes` to create datasets or rerank")

Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT, description="most hits returned")]
Ontology = Annotated[str | None, Field(description="restrict to documents of this ontology")]
Within = Annotated[list[str] | None, Field(
    description="restrict to the members of these datasets (ids from an earlier result)")]
Strict = Annotated[bool, Field(
    description="true: a category name, value or ontology that no stored document has is an "
    "error (with a 'did you mean'); false: it is only reported in `warnings`")]


@contextmanager
def tool_errors() -> Iterator[None]:
    """Our exceptions as ``ToolError`` with a message an agent can act on."""
    try:
        yield
    except ThalabusSyntaxError as exc:
        raise ToolError(f"query syntax error: {exc}") from exc
    except ThalabusError as exc:
        raise ToolError(f"{type(exc).__name__}: {exc}") from exc


def _cut(text: str | None) -> str | None:
    if text is None or len(text) <= TEXT_CHARS:
        return text
    return text[: TEXT_CHARS - 1] + "…"


def fragment_out(f: Fragment) -> FragmentOut:
    """The tool form of a retrieved fragment."""
    return FragmentOut(fragmentid=f.fragmentid, documentid=f.documentid, score=f.score,
                       source=f.source, text=_cut(f.text))


def document_out(d: DocumentHit, fragments: int) -> DocumentOut:
    """The tool form of a document hit, with its best ``fragments`` fragments."""
    best = sorted(d.fragments, key=lambda f: -f.score)[:fragments]
    return DocumentOut(documentid=d.documentid, score=d.score, title=d.title,
                       ontology=d.ontology, categories=d.categories,
                       fragments=[fragment_out(f) for f in best])


def member_out(m: Member) -> MemberOut:
    """The tool form of a dataset member."""
    return MemberOut(fragmentid=m.fragmentid, documentid=m.documentid, score=m.score,
                     source=m.source, text=_cut(m.text), hidden=m.hidden,
                     original_score=m.original_score, unscored=m.unscored)


def warnings_out(warnings: list[dict[str, Any]]) -> list[Warning_]:
    """Category warnings (``QueryWarning.to_dict``) in tool form."""
    return [Warning_(**w) for w in warnings]


class Tools:
    """The tool functions, bound to one graph object and its write permission."""

    def __init__(self, graph: ThalabusGraph, *, allow_writes: bool = False) -> None:
        self.graph = graph
        self.allow_writes = allow_writes

    async def _run(self, work: Callable[[], T]) -> T:
        """``work`` in a worker thread, our errors mapped to tool errors."""
        def guarded() -> T:
            with tool_errors():
                return work()
        return await anyio.to_thread.run_sync(guarded)

    # --- the tools -----------------------------------------------------------------------
    async def query(
            self,
            query: Annotated[str, Field(description="a Thalabus query (rules above)")],
            limit: Limit = 10,
            documents: Annotated[bool, Field(
                description="true: documents, each with its best matching fragments; "
                "false: the fragments themselves, best first")] = True,
            ontology: Ontology = None,
            within_datasets: Within = None,
            strict_categories: Strict = True,
            create_dataset: Annotated[bool, Field(
                description="store every hit (not only the first `limit`) as a dataset and "
                "return its id (needs --allow-writes)")] = False,
            session: Annotated[str, Field(
                description="the dataset's session name (its id is {session}#{n})")] = "mcp",
            goal_id: Annotated[str | None, Field(
                description="with create_dataset: attach the dataset to this goal, so "
                "goal_context uses it")] = None,
    ) -> QueryOutput:
        """Run a query; see ``language.QUERY_RULES`` (the tool description)."""
        if (create_dataset or goal_id) and not self.allow_writes:
            raise ToolError(WRITES_DISABLED)
        if goal_id and not create_dataset:
            raise ToolError("goal_id needs create_dataset=true (the new dataset is attached)")

        def work() -> QueryOutput:
            result = self.graph.query(query, ontology_id=ontology,
                                      subset_of_datasetids=within_datasets,
                                      return_documents=documents,
                                      create_dataset=create_dataset, session=session,
                                      strict_categories=strict_categories)
            dataset_id = result.dataset_ids[0] if result.dataset_ids else None
            if goal_id and dataset_id:
                self.graph.datasets.use_for_goal(goal_id, dataset_id)
            out = QueryOutput(query=query, returned="documents" if documents else "fragments",
                              total=0, dataset_id=dataset_id,
                              warnings=warnings_out([w.to_dict() for w in result.warnings]),
                              bookmarks=list(self.graph.bookmarks))
            if result.documents is not None:
                out.total = len(result.documents)
                out.documents = [document_out(d, 3) for d in result.documents[:limit]]
            else:
                out.total = len(result.fragments)
                out.fragments = [fragment_out(f) for f in result.fragments[:limit]]
            return out

        return await self._run(work)

    async def explain(
            self,
            query: Annotated[str, Field(description="a Thalabus query (rules above)")],
            ontology: Ontology = None,
            within_datasets: Within = None,
            strict_categories: Strict = True,
    ) -> ExplainOutput:
        """The plan of a query, without running its searches."""
        def work() -> ExplainOutput:
            plan = self.graph.explain(query, ontology_id=ontology,
                                      subset_of_datasetids=within_datasets,
                                      strict_categories=strict_categories)
            return ExplainOutput(query=plan["query"], ast=plan["ast"], plan=plan["plan"],
                                 warnings=warnings_out(plan["warnings"]))

        return await self._run(work)

    async def dataset_show(
            self,
            dataset_id: Annotated[str, Field(description="a dataset id, e.g. 'mcp#1'")],
            limit: Limit = 20,
            include_hidden: Annotated[bool, Field(
                description="also list members hidden from readers")] = False,
    ) -> DatasetOutput:
        """A dataset's description, lineage and best members."""
        def work() -> DatasetOutput:
            datasets = self.graph.datasets
            info = datasets.get(dataset_id)
            members = datasets.members(dataset_id, include_hidden=include_hidden, limit=limit)
            lineage: list[str] = []
            parents = info.derived_from
            while parents and len(lineage) < LINEAGE_DEPTH:
                lineage.append(parents[0])
                parents = datasets.get(parents[0]).derived_from
            return DatasetOutput(
                dataset_id=info.datasetid, kind=info.kind, query=info.query,
                session=info.session, created_at=str(info.created_at),
                members_total=info.members, hidden=info.hidden,
                weight_scale=info.weight_scale, reranked=info.reranked, reason=info.reason,
                failures=info.failures, lineage=lineage,
                members=[member_out(m) for m in members])

        return await self._run(work)

    async def rerank_dataset(
            self,
            dataset_id: Annotated[str, Field(description="the dataset to rerank")],
            query: Annotated[str | None, Field(
                description="a Thalabus query whose positive \"meaning\" phrases the "
                "reranker scores against (default: the dataset's own query)")] = None,
            limit: Limit = 20,
    ) -> RerankOutput:
        """Rerank a dataset into a new derived dataset (a write)."""
        if not self.allow_writes:
            raise ToolError(WRITES_DISABLED)

        def work() -> RerankOutput:
            result = self.graph.rerank_dataset(dataset_id, query)
            members = self.graph.datasets.members(result.dataset_id, limit=limit)
            return RerankOutput(
                dataset_id=result.dataset_id, parent_id=result.parent_id, query=result.query,
                reranked=result.reranked,
                degraded=not result.reranked or result.reason is not None,
                reason=result.reason, rounds=result.rounds, failures=result.failures,
                weight_scale=result.weight_scale, unscored=result.unscored,
                capped=result.capped, members_total=len(result.fragments),
                members=[member_out(m) for m in members], bookmarks=list(result.bookmarks))

        return await self._run(work)

    async def goal_context(
            self,
            goal_id: Annotated[str, Field(description="the goal whose datasets are used")],
            char_budget: Annotated[int | None, Field(
                ge=1, description="most characters of fragment text (default: the "
                "configured MAX_RAG_MESSAGE_LENGTH)")] = None,
            target: Annotated[int | None, Field(
                ge=1, description="fragments wanted; below-threshold members fill up to it "
                "(default: MAX_RERANKING_OUTPUT_DOC)")] = None,
    ) -> GoalContextOutput:
        """The fragments assembled for a goal."""
        def work() -> GoalContextOutput:
            context = self.graph.goal_context(goal_id, char_budget=char_budget, target=target)
            return GoalContextOutput(
                goal_id=goal_id, datasets=context.datasets,
                fragments=[member_out(m) for m in context.fragments],
                characters=context.characters, truncated=context.truncated,
                fill_up_used=context.fill_up_used, filled_from=context.filled_from,
                weight_scales=context.weight_scales)

        return await self._run(work)


__all__ = ["TEXT_CHARS", "WRITES_DISABLED", "Tools", "tool_errors"]
