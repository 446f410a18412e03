"""The LangChain and LlamaIndex adapters run inside their frameworks against the real Neo4j.

The sample corpus is loaded once; what each framework hands back is compared with what the
engine itself returns for the same query and scope (fragment ids, document ids, scores,
contributions, order, the documents' details), after dropping, per document, a fragment whose
text another fragment already has (computed here independently of the adapters' code). A plain
question is one semantic phrase by default; Thalabus syntax is ``query_syntax=True``.
Reranking talks the vLLM /score format to a loopback server whose
scores are the passages' lengths, so the expected order is computed here independently.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.language_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompt_values import PromptValue
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnableParallel, RunnablePassthrough
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import NodeWithScore

from tests.integration.sample import load_sample
from tests.support.loopback import LoopbackServer, Request, Response, score_handler
from thalabus_graph import ThalabusGraph, ThalabusSyntaxError
from thalabus_graph.errors import ConfigurationError
from thalabus_graph.fragments import Fragment
from thalabus_graph.graph.database import Database
from thalabus_graph.integrations import langchain as lc
from thalabus_graph.integrations import llamaindex as li
from thalabus_graph.query import Semantic, serialize
from thalabus_graph.rerank import (
    NoReranking,
    RecordingTracer,
    RerankingRetriever,
    ScoreApiReranker,
)

pytestmark = [pytest.mark.integration, pytest.mark.line_neutral]

QUERY = '"asylum seeker" AND COUNTRY_OF_ORIGIN=IQ'
"""A scored side with a pushed-down filter: more than ``CANDIDATES`` fragments match."""
CLAUSES = "asylum seeker"
"""What a reranker must be asked for ``QUERY``: its positive semantic clauses."""
K = 4
CANDIDATES = 10


@pytest.fixture(scope="module")
def graph(db: Database) -> ThalabusGraph:
    return load_sample(db)


@pytest.fixture(scope="module")
def asked() -> list[str]:
    """The query texts the loopback reranker received."""
    return []


@pytest.fixture(scope="module")
def score_server(asked: list[str]) -> Iterator[LoopbackServer]:
    def by_length(query: str, text: str) -> float:
        asked.append(query)
        return float(len(text))

    with LoopbackServer(score_handler("vllm-score", by_length)) as server:
        yield server


@pytest.fixture(scope="module")
def failing_server() -> Iterator[LoopbackServer]:
    def fail(_: Request) -> Response:
        return Response(status=500, json_body={"error": "boom"})

    with LoopbackServer(fail) as server:
        yield server


GRAIN_ORDER = {"chapters": 0, "summaries": 1, "questions": 2, "paragraphs": 3, "keywords": 4}


def without_repeated_texts(fragments: list[Fragment]) -> list[Fragment]:
    """The reference rule: per document and text, the coarser grain with the better score."""
    groups: dict[tuple[str, str], list[Fragment]] = {}
    for f in fragments:
        groups.setdefault((f.documentid, " ".join((f.text or f.fragmentid).split())),
                          []).append(f)
    kept = []
    for group in groups.values():
        coarse = sorted(group, key=lambda f: (GRAIN_ORDER.get(f.source, 9), f.fragmentid))[0]
        contributions = tuple(sorted({c for f in group for c in f.contributions}))
        kept.append(Fragment(coarse.fragmentid, coarse.documentid, coarse.text,
                             max(f.score for f in group), coarse.source, contributions))
    return sorted(kept, key=lambda f: (-f.score, f.fragmentid))


def engine_fragments(graph: ThalabusGraph, query: str = QUERY, *, ontology_id: str = "asylum",
                     k: int = K) -> list[Fragment]:
    """What the engine itself returns when asked for ``k`` results (its pools sized to k, as
    an adapter asks): the reference every adapter must reproduce."""
    full = graph.query(query, ontology_id=ontology_id, return_documents=False).fragments
    assert len(full) > CANDIDATES, "the query must have more hits than the candidates"
    fragments = graph.query(query, ontology_id=ontology_id, return_documents=False,
                            limit=k).fragments
    return without_repeated_texts(fragments)[:k]


def expected_metadata(graph: ThalabusGraph, fragments: list[Fragment]
                      ) -> list[dict[str, Any]]:
    details = {d.documentid: d for d in graph.documents_of(fragments)}
    # a score within 1e-6: right after the module's ingest Lucene's merges still move BM25's
    # statistics, and with them a fused fragment's score by about 1e-8 between two queries
    return [{"fragment_id": f.fragmentid, "document_id": f.documentid,
             "score": pytest.approx(f.score, abs=1e-6),
             "contributions": list(f.contributions), "reranked": False,
             "title": details[f.documentid].title,
             "language": details[f.documentid].properties.get("language"),
             "categories": details[f.documentid].categories} for f in fragments]


def reranked_by_length(fragments: list[Fragment], k: int = K) -> list[Fragment]:
    """The candidates in the order the length-scoring server must produce."""
    return sorted(fragments, key=lambda f: (-len(f.text or ""), f.fragmentid))[:k]


def reranker(server: LoopbackServer) -> ScoreApiReranker:
    return ScoreApiReranker(server.url, protocol="vllm-score", max_retries=0)


# --- LangChain ------------------------------------------------------------------------------
def metadata_of(docs: list[Document]) -> list[dict[str, Any]]:
    return [d.metadata for d in docs]


def test_langchain_lcel_chain_gets_the_engines_fragments(graph: ThalabusGraph) -> None:
    retriever = lc.ThalabusLangChainRetriever(graph=graph, ontology_id="asylum", k=K,
                                              query_syntax=True)
    prompts: list[PromptValue] = []

    def record(prompt: PromptValue) -> PromptValue:
        prompts.append(prompt)
        return prompt

    def context(docs: list[Document]) -> str:
        return "\n\n".join(f"[{d.metadata['fragment_id']}] {d.page_content}" for d in docs)

    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer from the context.\n{context}"), ("human", "{question}")])
    answer = (RunnableLambda(lambda x: {"context": context(x["docs"]),
                                        "question": x["question"]})
              | prompt | RunnableLambda(record)
              | FakeListChatModel(responses=["They were granted asylum."]) | StrOutputParser())
    chain = RunnableParallel(docs=retriever, question=RunnablePassthrough()).assign(
        answer=answer)
    out = chain.invoke(QUERY)
    expected = engine_fragments(graph)
    assert metadata_of(out["docs"]) == expected_metadata(graph, expected)
    assert [d.page_content for d in out["docs"]] == [f.text for f in expected]
    assert [d.id for d in out["docs"]] == [f.fragmentid for f in expected]
    assert out["answer"] == "They were granted asylum."
    shown = prompts[0].to_string()
    positions = [shown.index(f"[{f.fragmentid}] {f.text}") for f in expected]
    assert positions == sorted(positions) and QUERY in shown


def test_langchain_async_and_batch_agree_with_sync(graph: ThalabusGraph) -> None:
    retriever = lc.ThalabusLangChainRetriever(graph=graph, ontology_id="asylum", k=K,
                                              query_syntax=True)
    expected = expected_metadata(graph, engine_fragments(graph))
    assert metadata_of(asyncio.run(retriever.ainvoke(QUERY))) == expected
    batched = asyncio.run(retriever.abatch([QUERY, '"a cat on the roof"']))
    assert metadata_of(batched[0]) == expected
    other = graph.query('"a cat on the roof"', ontology_id="asylum", return_documents=False)
    assert metadata_of(batched[1]) == expected_metadata(
        graph, without_repeated_texts(other.fragments)[:K])


def test_langchain_scope_phrase_mode_and_errors(graph: ThalabusGraph) -> None:
    question = 'What happened to the "asylum seeker" from Iraq? \\ AND NOT'
    phrase = lc.ThalabusLangChainRetriever(graph=graph, k=3)
    reference = graph.query(serialize(Semantic(question)), return_documents=False,
                            limit=3).fragments
    assert metadata_of(phrase.invoke(question)) == expected_metadata(
        graph, without_repeated_texts(reference)[:3])
    stories = lc.ThalabusLangChainRetriever(graph=graph, ontology_id="stories", k=50)
    assert {d.metadata["document_id"] for d in stories.invoke("cat")} <= {
        f.documentid for f in graph.query('"cat"', ontology_id="stories",
                                          return_documents=False).fragments}
    with pytest.raises(ThalabusSyntaxError):
        lc.ThalabusLangChainRetriever(graph=graph, query_syntax=True).invoke('"unclosed')
    with pytest.raises(ValueError, match="extra"):
        lc.ThalabusLangChainRetriever(graph=graph, ontology="asylum")  # a misspelt field


def test_a_lone_dataset_id_scopes_both_adapters_as_one_id(graph: ThalabusGraph) -> None:
    (dataset,) = graph.query('"asylum seeker"', return_documents=False, create_dataset=True,
                             session="adapters-scope").dataset_ids
    members = {f.documentid for f in graph.query('"asylum seeker"', return_documents=False,
                                                 subset_of_datasetids=[dataset]).fragments}
    as_list = lc.ThalabusLangChainRetriever(graph=graph, k=K, subset_of_datasetids=[dataset])
    lone = lc.ThalabusLangChainRetriever(graph=graph, k=K,
                                         subset_of_datasetids=dataset)  # type: ignore[arg-type]
    expected = metadata_of(as_list.invoke("asylum seeker"))
    assert expected and {m["document_id"] for m in expected} <= members
    assert metadata_of(lone.invoke("asylum seeker")) == expected
    nodes = li.ThalabusLlamaIndexRetriever(graph, k=K, subset_of_datasetids=dataset
                                           ).retrieve("asylum seeker")
    assert [n.node.metadata["fragment_id"] for n in nodes] == [
        m["fragment_id"] for m in expected]


@pytest.mark.parametrize("framework", ["langchain", "llamaindex"])
def test_a_plain_question_gets_distinct_texts_and_document_details(
        graph: ThalabusGraph, framework: str) -> None:
    question = "how do I clean a kitchen floor?"
    if framework == "langchain":
        docs = lc.ThalabusLangChainRetriever(graph=graph, k=10).invoke(question)
        found = [(d.metadata, d.page_content) for d in docs]
    else:
        nodes = li.ThalabusLlamaIndexRetriever(graph, k=10).retrieve(question)
        found = [(n.node.metadata, n.node.get_content()) for n in nodes]
    raw = graph.query(serialize(Semantic(question)), return_documents=False).fragments
    texts = [(f.documentid, " ".join((f.text or "").split())) for f in raw[:20]]
    assert len(set(texts)) < len(texts), "the sample must hold a repeated text in the top 20"
    assert len(found) == 10
    keys = [(m["document_id"], " ".join(text.split())) for m, text in found]
    assert len(set(keys)) == len(keys)
    assert [m["fragment_id"] for m, _ in found] == [
        f.fragmentid for f in without_repeated_texts(raw)[:10]]
    for metadata, _ in found:
        assert metadata["title"] and metadata["language"] and metadata["categories"]


# --- LlamaIndex -----------------------------------------------------------------------------
def node_metadata(nodes: list[NodeWithScore]) -> list[dict[str, Any]]:
    return [n.node.metadata for n in nodes]


def test_llamaindex_query_engine_gets_the_engines_fragments(graph: ThalabusGraph) -> None:
    retriever = li.ThalabusLlamaIndexRetriever(graph, ontology_id="asylum", k=K,
                                               query_syntax=True)
    engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())
    response = engine.query(QUERY)
    expected = engine_fragments(graph)
    assert node_metadata(response.source_nodes) == expected_metadata(graph, expected)
    assert [n.node.node_id for n in response.source_nodes] == [f.fragmentid for f in expected]
    assert [n.score for n in response.source_nodes] == [f.score for f in expected]
    assert [n.node.get_content() for n in response.source_nodes] == [f.text for f in expected]
    # MockLLM answers with the prompt it got: the fragments' text, without our metadata keys
    assert expected[0].text and expected[0].text[:60] in str(response)
    assert "fragment_id" not in str(response)
    async_response = asyncio.run(engine.aquery(QUERY))
    assert node_metadata(async_response.source_nodes) == expected_metadata(graph, expected)


# --- reranking, both frameworks ---------------------------------------------------------------
Retrieve = Callable[..., list[tuple[dict[str, Any], float | None]]]


def via_langchain(graph: ThalabusGraph, query: str = QUERY, **kwargs: Any
                  ) -> list[tuple[dict[str, Any], None]]:
    docs = lc.ThalabusLangChainRetriever(graph=graph, query_syntax=True, **kwargs).invoke(query)
    return [(d.metadata, None) for d in docs]


def via_llamaindex(graph: ThalabusGraph, query: str = QUERY, **kwargs: Any
                   ) -> list[tuple[dict[str, Any], float]]:
    nodes = li.ThalabusLlamaIndexRetriever(graph, query_syntax=True, **kwargs).retrieve(query)
    return [(n.node.metadata, n.score) for n in nodes]


@pytest.mark.parametrize("retrieve", [via_langchain, via_llamaindex])
def test_reranking_reorders_by_the_rerankers_scores(
        graph: ThalabusGraph, score_server: LoopbackServer, asked: list[str],
        retrieve: Retrieve) -> None:
    asked.clear()
    tracer = RecordingTracer()
    found = retrieve(graph, ontology_id="asylum", k=K, reranker=reranker(score_server),
                     candidates=CANDIDATES, tracer=tracer)
    candidates = engine_fragments(graph, k=CANDIDATES)
    expected = reranked_by_length(candidates)
    assert [m["fragment_id"] for m, _ in found] == [f.fragmentid for f in expected]
    assert [m["score"] for m, _ in found] == [f.score for f in expected]
    assert [m["rerank_score"] for m, _ in found] == [float(len(f.text or "")) for f in expected]
    assert all(m["reranked"] and "degraded_reason" not in m for m, _ in found)
    assert set(asked) == {CLAUSES} and len(asked) == CANDIDATES
    if retrieve is via_llamaindex:  # a node's score is the one it is ordered by
        assert [s for _, s in found] == [m["rerank_score"] for m, _ in found]
    assert [e.name for e in tracer.events] == ["thalabus.rerank.reranked"]


@pytest.mark.parametrize("retrieve", [via_langchain, via_llamaindex])
def test_a_failing_reranker_degrades_to_the_retrieved_order(
        graph: ThalabusGraph, failing_server: LoopbackServer, retrieve: Retrieve) -> None:
    found = retrieve(graph, ontology_id="asylum", k=K, reranker=reranker(failing_server),
                     candidates=CANDIDATES)
    # the retrieved order of the pool the adapter asked for (its candidates): a calibrated
    # score reads the phrase's background from that pool
    expected = expected_metadata(graph, engine_fragments(graph, k=CANDIDATES)[:K])
    for item in expected:
        item["degraded_reason"] = "failed"
    assert [m for m, _ in found] == expected
    if retrieve is via_llamaindex:
        assert [s for _, s in found] == [m["score"] for m in expected]


@pytest.mark.parametrize("retrieve", [via_langchain, via_llamaindex])
def test_a_query_without_phrases_keeps_the_retrieved_order(
        graph: ThalabusGraph, score_server: LoopbackServer, asked: list[str],
        retrieve: Retrieve) -> None:
    asked.clear()
    query = "COUNTRY_OF_ORIGIN=IQ AND NOT 'appeal'"
    found = retrieve(graph, query, ontology_id="asylum", k=K,
                     reranker=reranker(score_server), candidates=CANDIDATES)
    reference = graph.query(query, ontology_id="asylum", return_documents=False).fragments
    assert [m["fragment_id"] for m, _ in found] == [
        f.fragmentid for f in without_repeated_texts(reference)[:K]]
    assert found and all(not m["reranked"] and m["degraded_reason"] == "no-semantic-query"
                         for m, _ in found)
    assert asked == []


def test_reranking_bounds_are_checked_when_the_retriever_is_built(graph: ThalabusGraph) -> None:
    stage = li.ThalabusLlamaIndexRetriever(graph, k=60, reranker=NoReranking()).source.retriever
    assert isinstance(stage, RerankingRetriever) and stage.candidates == 60  # max(50, k)
    with pytest.raises(ConfigurationError, match="candidates >= top_n"):
        lc.ThalabusLangChainRetriever(graph=graph, k=20, candidates=10, reranker=NoReranking())
    with pytest.raises(ConfigurationError, match="candidates >= top_n"):
        li.ThalabusLlamaIndexRetriever(graph, k=5, candidates=0, reranker=NoReranking())
