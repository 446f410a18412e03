"""The sample corpus loaded into the test server, with an embedder that remembers vectors.

The embedder is the real multilingual e5 model; memoising its answers per process only saves
re-embedding the same texts when a test module reloads the corpus after another one cleaned
the graph.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from thalabus_graph.embeddings import E5LocalEmbedder, Vectors
from thalabus_graph.engine import ThalabusGraph
from thalabus_graph.graph.database import Database
from thalabus_graph.settings import Settings

CORPUS = Path(__file__).resolve().parents[2] / "thalabus_graph" / "resources" / \
    "sample_corpus.jsonl"


class MemoEmbedder:
    """Wraps the local e5 model and memoises every text it has embedded."""

    def __init__(self) -> None:
        self.inner = E5LocalEmbedder()
        self.memo: dict[tuple[str, str], np.ndarray[Any, Any]] = {}
        self.calls = 0

    @property
    def dimensions(self) -> int:
        return self.inner.dimensions

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def _embed(self, kind: str, texts: Sequence[str]) -> Vectors:
        missing = [t for t in dict.fromkeys(texts) if (kind, t) not in self.memo]
        if missing:
            self.calls += 1
            fn = self.inner.embed_queries if kind == "q" else self.inner.embed_passages
            for text, vec in zip(missing, fn(missing), strict=True):
                self.memo[(kind, text)] = vec
        return np.stack([self.memo[(kind, t)] for t in texts]).astype(np.float32)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self._embed("q", texts)

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return self._embed("p", texts)


@cache
def shared_embedder() -> MemoEmbedder:
    """One memoising embedder per test process."""
    return MemoEmbedder()


def documents() -> list[dict[str, Any]]:
    """The sample corpus as dicts."""
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def load_sample(db: Database, settings: Settings | None = None) -> ThalabusGraph:
    """Wipe the data, ingest the sample corpus and return an engine on it."""
    db.write("migrations_delete_data_nodes")
    graph = ThalabusGraph(db, settings=settings or Settings.from_env(),
                          embedder=shared_embedder())
    graph.ingest(CORPUS, progress=False, strict=True)
    return graph


def docs_where(predicate: Any) -> set[str]:
    """Document ids of the sample corpus whose dict satisfies ``predicate``."""
    return {d["documentid"] for d in documents() if predicate(d)}


def has(name: str, *values: str) -> Any:
    """Predicate: the document has any of ``values`` for category ``name``."""
    return lambda d: bool(set(d.get("categories", {}).get(name, [])) & set(values))


def graph_scored_by(db: Database, url: str, *, batch_size: int | None = None,
                    **overrides: Any) -> ThalabusGraph:
    """The sample corpus in ``db`` and an engine whose reranker is the vLLM-``/score``
    loopback server at ``url`` (settings from the environment plus ``overrides``)."""
    from thalabus_graph.rerank import ScoreApiReranker

    base = load_sample(db)
    extra = {} if batch_size is None else {"batch_size": batch_size}
    return ThalabusGraph(db, settings=Settings.from_env(**overrides), embedder=base.embedder,
                         reranker=ScoreApiReranker(url, protocol="vllm-score", **extra))
