"""A small labelled set on disk in the layout ``thalabus-graph calibrate`` reads (BEIR's:
corpus.jsonl, queries.jsonl, a qrels TSV, and precomputed vectors), for its tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

DIM = 32


def labelled_files(folder: Path, queries: int = 30, size: int = 200, seed: int = 3) -> Path:
    """A small labelled set in BEIR's layout with precomputed vectors: each query near its
    two relevant documents."""
    rng = np.random.default_rng(seed)
    corpus = rng.standard_normal((size, DIM))
    corpus /= np.linalg.norm(corpus, axis=1, keepdims=True)
    emb = folder / "embeddings"
    emb.mkdir(parents=True)
    rows, qrels = [], ["query-id\tcorpus-id\tscore"]
    for i in range(queries):
        rel = rng.choice(size, 2, replace=False)
        q = corpus[rel].sum(axis=0) + 0.1 * rng.standard_normal(DIM)
        rows.append(q / np.linalg.norm(q))
        qrels += [f"q{i}\td{int(r)}\t1" for r in rel]
    np.save(emb / "corpus.npy", corpus.astype(np.float32))
    np.save(emb / "queries.npy", np.asarray(rows, dtype=np.float32))
    (emb / "corpus.ids.json").write_text(json.dumps([f"d{i}" for i in range(size)]))
    (emb / "queries.ids.json").write_text(json.dumps([f"q{i}" for i in range(queries)]))
    (folder / "qrels.tsv").write_text("\n".join(qrels) + "\n")
    (folder / "corpus.jsonl").write_text("".join(
        json.dumps({"_id": f"d{i}", "title": "", "text": f"passage number {i}"}) + "\n"
        for i in range(size)))
    (folder / "queries.jsonl").write_text("".join(
        json.dumps({"_id": f"q{i}", "text": f"question about passage {i}"}) + "\n"
        for i in range(queries)))
    return folder


