"""The MCP tools over one ``ThalabusGraph``: typed inputs, typed outputs, errors as tool errors.

Each public coroutine is one tool; its parameters (with their descriptions) become the tool's
input schema and its return model the output schema. The engine is synchronous, so every call
runs in a worker thread and the event loop keeps serving other clients. Our errors become
``ToolError`` (the client gets ``isError`` and the message: a syntax error with its caret
display, an unknown category with its "did you mean"), so a bad call never ends the server.
Every answer is fitted to the server's output budget (``budget``) and every message leaves
with its credentials redacted (``Tools.redact``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, TypeVar
from urllib.parse import unquote, urlsplit

import anyio.to_thread
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from thalabus_graph._http import redact
from thalabus_graph.datasets import Member
from thalabus_graph.engine import DocumentHit, QueryResult, ThalabusGraph
from thalabus_graph.errors import ThalabusError, ThalabusSyntaxError
from thalabus_graph.fragments import Fragment
from thalabus_graph.mcp.budget import DEFAULT_OUTPUT_CHARS, cut_text, fit_page, fit_tree
from thalabus_graph.mcp.language import Sample, graph_sample, overview
from thalabus_graph.mcp.schemas import (
    CategoriesOutput,
    CategoryOut,
    DatasetOutput,
    DocumentOut,
    ExplainOutput,
    FragmentOut,
    GoalContextOutput,
    MemberOut,
    OntologyOut,
    QueryOutput,
    RerankOutput,
    ValueOut,
    Warning_,
)
from thalabus_graph.mcp.views import Views
from thalabus_graph.settings import Settings

T = TypeVar("T")
TEXT_CHARS = 2000
"""Longest fragment text returned; longer texts are cut (with "…") to spare the agent's
context. The full text stays in the graph."""
MAX_LIMIT = 200
MAX_OFFSET = 10_000
"""Most items a page may skip (a dataset's members are read up to ``offset + limit``)."""
LINEAGE_DEPTH = 32
"""Most parents followed for a dataset's lineage (reranks of reranks)."""
MAX_NAMES, MAX_VALUES = 200, 100
"""Most category names and values per name ``categories`` lists in one answer."""
WRITES_DISABLED = ("writes are disabled on this server (read-only mode): restart it with "
                   "`thalabus-graph mcp --allow-writes` to create datasets or rerank")

Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT, description="most hits returned")]
Offset = Annotated[int, Field(ge=0, le=MAX_OFFSET, description="hits skipped first (a cut "
                                                               "answer's next_offset)")]
OntologyId = Annotated[str | None, Field(
    description="restrict to documents of this ontology (the `categories` tool lists them)")]
SubsetOfDatasetids = Annotated[list[str] | None, Field(
    description="restrict to the members of these datasets (ids from an earlier result)")]
Strict = Annotated[bool, Field(
    description="true: a category name, value or ontology that no stored document has is an "
    "error (with a 'did you mean'); false: it is only reported in `warnings`")]


def url_secrets(settings: Settings) -> list[str]:
    """The credentials the configured service URLs and keys carry (user info of the reranker
    and embedder URLs, as written and decoded; the API keys): redacted wherever they would
    reach a tool answer or a log line, also when a service echoes them."""
    found: list[str] = []
    for url in (settings.reranker_url, settings.embedder_url):
        try:
            parts = urlsplit(url)
            user, password = parts.username, parts.password
        except ValueError:
            continue
        if "@" in parts.netloc:
            userinfo = parts.netloc.rsplit("@", 1)[0]
            found.extend([userinfo, unquote(userinfo)])
        found.extend(unquote(v) for v in (password, user) if v and len(v) >= 4)
    found.extend(k for k in (settings.reranker_api_key, settings.embedder_api_key) if k)
    return sorted(set(found), key=len, reverse=True)


@contextmanager
def tool_errors(secrets: list[str] | None = None) -> Iterator[None]:
    """Our exceptions as ``ToolError`` with a message an agent can act on, its credentials
    redacted (``secrets`` verbatim, and anything shaped like one)."""
    try:
        yield
    except ThalabusSyntaxError as exc:
        raise ToolError(redact(f"query syntax error: {exc}", secrets or ())) from exc
    except ThalabusError as exc:
        raise ToolError(redact(f"{type(exc).__name__}: {exc}", secrets or ())) from exc


def _cut(text: str | None) -> str | None:
    return cut_text(text, TEXT_CHARS)


def fragment_out(f: Fragment) -> FragmentOut:
    """The tool form of a retrieved fragment."""
    return FragmentOut(fragmentid=f.fragmentid, documentid=f.documentid, score=f.score,
                       source=f.source, text=_cut(f.text),
                       context=None if f.context is None else list(f.context))


def document_out(d: DocumentHit, fragments: int) -> DocumentOut:
    """The tool form of a document hit, with its best ``fragments`` fragments."""
    best = sorted(d.fragments, key=lambda f: -f.score)[:fragments]
    return DocumentOut(documentid=d.documentid, score=d.score, title=d.title,
                       ontology=d.ontology, categories=d.categories,
                       fragments=[fragment_out(f) for f in best], context=d.context)


def query_output(result: QueryResult, query: str, offset: int, limit: int,
                 bookmarks: list[str]) -> QueryOutput:
    """The page ``offset`` .. ``offset + limit`` of a query's documents (or fragments)."""
    out = QueryOutput(query=query,
                      returned="fragments" if result.documents is None else "documents",
                      total=0, offset=offset,
                      dataset_id=result.dataset_ids[0] if result.dataset_ids else None,
                      warnings=warnings_out([w.to_dict() for w in result.warnings]),
                      bookmarks=bookmarks)
    page = slice(offset, offset + limit)
    if result.documents is not None:
        out.total = len(result.documents)
        out.documents = [document_out(d, 3) for d in result.documents[page]]
        returned = len(out.documents)
    else:
        out.total = len(result.fragments)
        out.fragments = [fragment_out(f) for f in result.fragments[page]]
        returned = len(out.fragments)
    out.next_offset = next_offset(offset, returned, out.total)
    return out


def member_out(m: Member) -> MemberOut:
    """The tool form of a dataset member."""
    return MemberOut(fragmentid=m.fragmentid, documentid=m.documentid, score=m.score,
                     source=m.source, text=_cut(m.text), hidden=m.hidden,
                     original_score=m.original_score, unscored=m.unscored)


def warnings_out(warnings: list[dict[str, Any]]) -> list[Warning_]:
    """Warnings (``QueryWarning.to_dict``) in tool form, every field of every kind kept."""
    return [Warning_.model_validate(w) for w in warnings]


def next_offset(offset: int, returned: int, total: int) -> int | None:
    """The offset of the page after this one, None when this one reaches the end."""
    return offset + returned if offset + returned < total else None


class Tools:
    """The tool functions, bound to one graph object, its write permission and the output
    budget (characters per answer)."""

    def __init__(self, graph: ThalabusGraph, *, allow_writes: bool = False,
                 output_chars: int = DEFAULT_OUTPUT_CHARS, views: Views | None = None) -> None:
        self.graph = graph
        self.views = views or Views(graph)
        self.allow_writes = allow_writes
        self.output_chars = output_chars
        self.secrets = url_secrets(graph.settings)

    def redact(self, text: str) -> str:
        """``text`` with the configured credentials and anything shaped like one redacted."""
        return redact(text, self.secrets)

    async def _run(self, work: Callable[[], T]) -> T:
        """``work`` in a worker thread, our errors mapped to tool errors."""
        def guarded() -> T:
            with tool_errors(self.secrets):
                return work()
        return await anyio.to_thread.run_sync(guarded)

    def sample(self) -> Sample:
        """The examples' material from this graph (``language.graph_sample``)."""
        return graph_sample(self.graph)

    # --- the tools -----------------------------------------------------------------------
    async def categories(
            self,
            ontology_id: Annotated[str | None, Field(
                description="list the categories of this ontology's documents (default: "
                "all documents)")] = None,
            max_names: Annotated[int, Field(ge=1, le=MAX_NAMES, description="most category "
                                            "names listed, most documents first")] = 20,
            max_values: Annotated[int, Field(ge=1, le=MAX_VALUES, description="most values "
                                             "listed per name, most documents first")] = 10,
    ) -> CategoriesOutput:
        """The graph's category names, values and ontologies with document counts, of the
        documents in the caller's view when a required filter holds it."""
        def work() -> CategoriesOutput:
            visible = self.views.visible(self.views.required())
            row = overview(self.graph, ontology_id, max_names, max_values,
                           documentids=None if visible is None else sorted(visible))
            if ontology_id is not None and ontology_id not in row["ontology_spellings"]:
                known = ", ".join(o["ontologyid"] for o in row["ontologies"])
                hint = (f"; did you mean {row['ontology_spellings'][0]!r}?"
                        if row["ontology_spellings"] else "")
                raise ToolError(f"unknown ontology {ontology_id!r}{hint} (stored: "
                                f"{known or 'none'})")
            out = CategoriesOutput(
                ontology_id=ontology_id, documents=row["documents"],
                categories=[CategoryOut(
                    name=n["name"], documents=n["documents"],
                    values=[ValueOut(**v) for v in n["values"]],
                    more_values=n["values_total"] - len(n["values"])) for n in row["names"]],
                more_categories=row["names_total"] - len(row["names"]),
                ontologies=[OntologyOut(**o) for o in row["ontologies"]],
                more_ontologies=row["ontologies_total"] - len(row["ontologies"]))
            data = fit_page(out.model_dump(), "categories", self.output_chars,
                            fitting="whole", offset=0,
                            more="ask fewer values per name (max_values), or the categories "
                            "of one ontology (ontology_id)")
            return CategoriesOutput.model_validate(data)

        return await self._run(work)

    async def query(
            self,
            query: Annotated[str, Field(description="a Thalabus query (rules above)")],
            limit: Limit = 10,
            offset: Offset = 0,
            documents: Annotated[bool, Field(
                description="true: documents, each with its best matching fragments; "
                "false: the fragments themselves, best first")] = True,
            ontology_id: OntologyId = None,
            subset_of_datasetids: SubsetOfDatasetids = None,
            strict_categories: Strict = True,
            create_dataset: Annotated[bool, Field(
                description="store every hit (not only the first `limit`) as a dataset and "
                "return its id (needs --allow-writes)")] = False,
            session: Annotated[str, Field(
                description="the dataset's session name (its id is {session}#{n})")] = "mcp",
            goal_id: Annotated[str | None, Field(
                description="with create_dataset: attach the dataset to this goal, so "
                "goal_context uses it")] = None,
            context: Annotated[str | None, Field(
                description="the name of one of this server's graph contexts: its rows "
                "come with each result")] = None,
    ) -> QueryOutput:
        """Run a query; see ``language.Sample.rules`` (the tool description)."""
        required = self.views.required()
        if (create_dataset or goal_id) and not self.allow_writes:
            raise ToolError(WRITES_DISABLED)
        if goal_id and not create_dataset:
            raise ToolError("goal_id needs create_dataset=true (the new dataset is attached)")

        def work() -> QueryOutput:
            space = self.views.space(required)
            result = self.graph.query(query, ontology_id=ontology_id,
                                      subset_of_datasetids=self.views.owned(
                                          subset_of_datasetids, required),
                                      return_documents=documents,
                                      create_dataset=create_dataset, session=space + session,
                                      strict_categories=strict_categories,
                                      required_filter=required,
                                      context=self.views.context(context))
            if goal_id and result.dataset_ids:
                self.graph.datasets.use_for_goal(space + goal_id, result.dataset_ids[0])
            out = query_output(result, query, offset, limit, list(self.graph.bookmarks))
            data = fit_page(out.model_dump(), out.returned, self.output_chars,
                            fitting="snippets", offset=offset, thin="fragments",
                            more="call again with offset={next} for the next ones, or ask "
                            "fewer (limit) for longer texts")
            return QueryOutput.model_validate(data)

        return await self._run(work)

    async def explain(
            self,
            query: Annotated[str, Field(description="a Thalabus query (rules above)")],
            ontology_id: OntologyId = None,
            subset_of_datasetids: SubsetOfDatasetids = None,
            strict_categories: Strict = True,
    ) -> ExplainOutput:
        """The plan of a query, without running its searches."""
        required = self.views.required()

        def work() -> ExplainOutput:
            plan = self.graph.explain(query, ontology_id=ontology_id,
                                      subset_of_datasetids=subset_of_datasetids,
                                      strict_categories=strict_categories,
                                      required_filter=required)
            out = ExplainOutput(query=plan["query"], ast=plan["ast"], plan=plan["plan"],
                                warnings=warnings_out(plan["warnings"]))
            data = fit_tree(out.model_dump(), self.output_chars, droppable=("ast",),
                            tree="plan", more="the whole plan: `thalabus-graph explain "
                            "--json` with the same query, or explain a part of the query")
            return ExplainOutput.model_validate(data)

        return await self._run(work)

    async def dataset_show(
            self,
            dataset_id: Annotated[str, Field(description="a dataset id, e.g. 'mcp#1'")],
            limit: Limit = 20,
            offset: Annotated[int, Field(ge=0, le=MAX_OFFSET, description="members skipped "
                                         "first (a cut answer's next_offset)")] = 0,
            include_hidden: Annotated[bool, Field(
                description="also list members hidden from readers")] = False,
    ) -> DatasetOutput:
        """A dataset's description, lineage and best members (inside the caller's view)."""
        required = self.views.required()

        def work() -> DatasetOutput:
            datasets = self.graph.datasets
            info = datasets.get(self.views.own(dataset_id, required, "dataset"))
            members, listed, total = self.views.page(info, include_hidden, offset, limit,
                                                     required)
            lineage: list[str] = []
            parents = info.derived_from
            while parents and len(lineage) < LINEAGE_DEPTH:
                lineage.append(parents[0])
                parents = datasets.get(parents[0]).derived_from
            out = DatasetOutput(
                dataset_id=info.datasetid, kind=info.kind, query=info.query,
                session=info.session, created_at=str(info.created_at),
                members_total=total,
                hidden=info.hidden,
                weight_scale=info.weight_scale, reranked=info.reranked,
                reason=None if info.reason is None else self.redact(info.reason),
                failures=info.failures, lineage=lineage,
                members=[member_out(m) for m in members], offset=offset,
                next_offset=next_offset(offset, len(members), listed))
            data = fit_page(out.model_dump(), "members", self.output_chars,
                            fitting="snippets", offset=offset,
                            more="call dataset_show again with offset={next}, or ask fewer "
                            "(limit) for longer texts")
            return DatasetOutput.model_validate(data)

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
        required = self.views.required()

        def work() -> RerankOutput:
            result = self.graph.rerank_dataset(self.views.own(dataset_id, required, "dataset"),
                                               query)
            kept = self.views.kept(self.graph.datasets.members(result.dataset_id), required)
            members = kept[:limit]
            out = RerankOutput(
                dataset_id=result.dataset_id, parent_id=result.parent_id, query=result.query,
                reranked=result.reranked,
                degraded=not result.reranked or result.reason is not None,
                reason=None if result.reason is None else self.redact(result.reason),
                rounds=result.rounds, failures=result.failures,
                weight_scale=result.weight_scale, unscored=result.unscored,
                capped=result.capped, members_total=len(kept),
                members=[member_out(m) for m in members], bookmarks=list(result.bookmarks),
                next_offset=next_offset(0, len(members), len(kept)))
            data = fit_page(out.model_dump(), "members", self.output_chars,
                            fitting="snippets", offset=0,
                            more=f"dataset_show with dataset_id={result.dataset_id!r} and "
                            "offset={next}")
            return RerankOutput.model_validate(data)

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
            offset: Annotated[int, Field(ge=0, le=MAX_OFFSET, description="fragments "
                                         "skipped first (a cut answer's next_offset)")] = 0,
    ) -> GoalContextOutput:
        """The fragments assembled for a goal (inside the caller's view)."""
        required = self.views.required()

        def work() -> GoalContextOutput:
            goal = self.views.space(required) + goal_id
            context = self.graph.goal_context(goal, char_budget=char_budget, target=target)
            fragments = self.views.kept(context.fragments, required)
            out = GoalContextOutput(
                goal_id=goal_id, datasets=context.datasets,
                fragments=[member_out(m) for m in fragments[offset:]],
                characters=context.characters, truncated=context.truncated,
                fill_up_used=context.fill_up_used, filled_from=context.filled_from,
                weight_scales=context.weight_scales, offset=offset)
            data = fit_page(out.model_dump(), "fragments", self.output_chars,
                            fitting="whole", offset=offset,
                            more="call goal_context again with offset={next}")
            return GoalContextOutput.model_validate(data)

        return await self._run(work)


__all__ = ["TEXT_CHARS", "WRITES_DISABLED", "Tools", "tool_errors", "url_secrets"]
