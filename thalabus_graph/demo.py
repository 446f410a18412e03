"""``make demo``: the product end to end on the sample corpus, in a few minutes on 2 cores.

Starts the local Neo4j (unless ``NEO4J_URI`` is set), migrates, ingests the sample corpus,
runs one query per operator (and a German query finding French and English documents),
creates a dataset, reranks it, prints the goal context and a Cypher snippet to inspect the
dataset, then stops Neo4j unless ``--keep`` is given. Exits non-zero if any step fails.

Every stage says when it starts and how long it took; the ingest shows its total, rate and
ETA while it runs, and loading the embedding model is announced before the wait.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from thalabus_graph.cli.common import NOTICE_LOGGERS
from thalabus_graph.embeddings import Embedder
from thalabus_graph.engine import ThalabusGraph
from thalabus_graph.errors import ThalabusError
from thalabus_graph.rerank import CrossEncoderReranker, Reranker
from thalabus_graph.settings import Settings

SAMPLE = Path(__file__).resolve().parent / "resources" / "sample_corpus.jsonl"
GOAL = "demo-goal"
SESSION = "demo"

QUERIES = (
    ("semantic, German query, French and English hits", '"Konversion zum Christentum"'),
    ("semantic AND category (filter pushed into the search)",
     '"asylum seeker" AND COUNTRY_OF_ORIGIN=IQ'),
    ("OR of two phrases", '"cat adventure" OR "squirrel friend"'),
    ("NOT with a multi-valued category", "COUNTRY_OF_ORIGIN=IQ,SY AND NOT DECISION=granted"),
    ("full-text, then case-sensitive full-text", "'kitchen floor' OR @'C++'"),
    ("nesting", '("military service" OR "national service") AND NOT COUNTRY_OF_ORIGIN=SY'),
)

INSPECT = """\
// Inspect the dataset in Neo4j Browser or cypher-shell:
MATCH (ds:Dataset {{datasetid: '{dataset}'}})-[a:AGGREGATES]->(m)
RETURN coalesce(m.fragmentid, m.documentid) AS member, a.weight AS weight, a.hidden AS hidden
ORDER BY weight DESC LIMIT 10;
// ...and its lineage:
MATCH path = (:Dataset {{datasetid: '{rerank}'}})-[:DERIVED_FROM*]->(:Dataset) RETURN path;"""


class EmbeddingPairScorer:
    """A local stand-in for a cross-encoder: scores (query, passage) pairs by e5 cosine.

    Used only when no score server is configured (``THALABUS_RERANKER_URL``), so the demo
    shows a real reranking pass without network access.
    """

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Cosine of the query and passage embeddings, one score per pair."""
        if not pairs:
            return []
        queries = self.embedder.embed_queries([q for q, _ in pairs])
        passages = self.embedder.embed_passages([p for _, p in pairs])
        return [float(x) for x in np.sum(queries * passages, axis=1)]


def run(uri: str, *, out: Any = sys.stdout, embedder: Embedder | None = None
        ) -> dict[str, Any]:
    """Run the demo against a server; returns what it showed (the end-to-end test reads it)."""
    settings = Settings.from_env()
    summary: dict[str, Any] = {"queries": {}}
    with ThalabusGraph.connect(uri, settings=settings, embedder=embedder) as graph:
        print(f"== migrate {uri}", file=out)
        report = graph.migrate()
        print(f"   schema at version {report.current_version}", file=out)
        print(f"== ingest {SAMPLE.name} (embeds every fragment: the longest stage)",
              file=out, flush=True)
        ingest = graph.ingest(SAMPLE, strict=True, progress=True)
        print(f"   done in {ingest.seconds:.1f} s: " + ", ".join(
            f"{k}={v}" for k, v in ingest.to_dict().items() if k != "errors"), file=out)
        summary["ingest"] = ingest.to_dict()
        for title, text in QUERIES:
            print(f"== {title}\n   {text}", file=out, flush=True)
            started = time.perf_counter()
            result = graph.query(text)
            docs = result.documents or []
            print(f"   {len(docs)} documents in {time.perf_counter() - started:.2f} s",
                  file=out)
            for d in docs[:4]:
                print(f"   {d.score:6.3f}  {d.documentid}  [{_language(d)}]  {d.title}", file=out)
            summary["queries"][text] = [d.documentid for d in docs]
        text = '"religious conversion" AND NOT COUNTRY_OF_ORIGIN=IR'
        result = graph.rag_fragments(text, create_dataset=True, session=SESSION)
        dataset = result.dataset_ids[0]
        print(f"== dataset {dataset}: {len(result.fragments)} fast-path fragments", file=out)
        graph.reranker = _demo_reranker(graph)
        print(f"== rerank {dataset} ({len(result.fragments)} members)", file=out, flush=True)
        reranked = graph.rerank_dataset(dataset, session=SESSION)
        state = "reranked" if reranked.reranked else f"order kept ({reranked.reason})"
        print(f"== rerank -> {reranked.dataset_id} ({state}, query {reranked.query!r})",
              file=out)
        for f in reranked.fragments[:4]:
            print(f"   {f.score:6.3f} (was {f.original_score:.3f})  {f.fragmentid}",
                  file=out)
        graph.datasets.use_for_goal(GOAL, reranked.dataset_id)
        context = graph.goal_context(GOAL)
        fill = "used" if context.fill_up_used else "not needed"
        print(f"== goal context of {GOAL}: {len(context.fragments)} fragments, "
              f"{context.characters} characters, fill-up {fill}", file=out)
        for m in context.fragments[:3]:
            print(f"   {m.score:6.3f}  {m.fragmentid}  {(m.text or '')[:70]}", file=out)
        print(INSPECT.format(dataset=dataset, rerank=reranked.dataset_id), file=out)
        summary.update(dataset=dataset, rerank=reranked.to_dict(), context=context.to_dict())
    return summary


def _show_notices() -> None:
    """Print the progress and model-loading lines (INFO on `NOTICE_LOGGERS`) on stderr."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("   %(message)s"))
    for name in NOTICE_LOGGERS:
        notices = logging.getLogger(name)
        notices.setLevel(logging.INFO)
        notices.addHandler(handler)
        notices.propagate = False


def _language(doc: Any) -> str:
    return str(doc.properties.get("language", "?"))


def _demo_reranker(graph: ThalabusGraph) -> Reranker:
    if graph.settings.reranker_url:
        return graph.reranker
    return CrossEncoderReranker(EmbeddingPairScorer(graph.embedder))


def main(argv: Sequence[str] | None = None) -> int:
    """Start Neo4j when needed, run the demo, stop Neo4j unless ``--keep``."""
    parser = argparse.ArgumentParser(prog="python -m thalabus_graph.demo",
                                     description=__doc__)
    parser.add_argument("--keep", action="store_true", help="leave the local Neo4j running")
    parser.add_argument("--data", default=".thalabus/demo-neo4j", help="local Neo4j data dir")
    args = parser.parse_args(argv)
    _show_notices()
    uri = os.environ.get("NEO4J_URI")
    server = None
    try:
        if uri is None:
            from thalabus_graph.graph.launcher import LocalNeo4j

            server = LocalNeo4j(data_dir=args.data)
            print("== starting the local Neo4j (first run downloads it with Maven)", flush=True)
            started = time.perf_counter()
            uri = server.start()
            print(f"   up in {time.perf_counter() - started:.0f} s at {uri}")
        run(uri)
    except ThalabusError as exc:
        print(f"demo failed: {exc}", file=sys.stderr)
        return 1
    finally:
        if server is not None and not args.keep:
            server.stop()
            print("== Neo4j stopped (use --keep to leave it running)")
    if server is not None and args.keep:
        print(f"== Neo4j left running at {uri}; stop it with "
              f"`thalabus-graph neo4j stop --data {args.data}`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
