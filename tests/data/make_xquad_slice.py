"""Rebuild ``tests/data/xquad-r-slice/`` from the full XQuAD-R set (kept outside the repo).

Run ``python tests/data/make_xquad_slice.py ../shared/data/xquad-r`` from the repository root.
The slice is deterministic: every ``PARAGRAPH_STEP``-th paragraph of the 120 (file order),
each in all three pool languages, and for every kept paragraph and language the first question
(file order) of that language judged for it. The layout, ids, texts, qrels and the precomputed
multilingual-e5-small vectors (float32 rows, same order as the ``*.ids.json`` lists) are
copied unchanged, so ``benchmarks.quality`` reads the slice like the full set.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

PARAGRAPH_STEP = 4
"""Keep paragraph 0, 4, 8, ... of the 120: 30 paragraphs spread over all 24 articles."""
OUT = Path(__file__).resolve().parent / "xquad-r-slice"


def _jsonl(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def _write_jsonl(path: Path, rows: list[dict[str, str]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")


def _rows(source: Path, name: str, keep: list[str]) -> np.ndarray:
    ids = json.loads((source / "embeddings" / f"{name}.ids.json").read_text(encoding="utf-8"))
    matrix = np.load(source / "embeddings" / f"{name}.npy").astype(np.float32)
    where = {i: n for n, i in enumerate(ids)}
    return np.stack([matrix[where[i]] for i in keep])


def main(source: Path) -> None:
    """Write the slice from the full set at ``source``."""
    corpus = _jsonl(source / "corpus.jsonl")
    paragraphs = list(dict.fromkeys(row["_id"].rsplit("-", 1)[0] for row in corpus))
    kept = set(paragraphs[::PARAGRAPH_STEP])
    docs = [row for row in corpus if row["_id"].rsplit("-", 1)[0] in kept]
    lines = (source / "qrels" / "dev.tsv").read_text(encoding="utf-8").splitlines()
    judged: dict[str, set[str]] = {}
    for line in lines[1:]:
        query, doc, _ = line.split("\t")
        judged.setdefault(query, set()).add(doc.rsplit("-", 1)[0])
    queries, seen = [], set()
    for row in _jsonl(source / "queries.jsonl"):
        (paragraph,) = judged[row["_id"]]
        if paragraph in kept and (paragraph, row["language"]) not in seen:
            seen.add((paragraph, row["language"]))
            queries.append(row)
    query_ids = {q["_id"] for q in queries}
    (OUT / "qrels").mkdir(parents=True, exist_ok=True)
    (OUT / "embeddings").mkdir(exist_ok=True)
    _write_jsonl(OUT / "corpus.jsonl", docs)
    _write_jsonl(OUT / "queries.jsonl", queries)
    (OUT / "qrels" / "dev.tsv").write_text(
        lines[0] + "\n" + "".join(line + "\n" for line in lines[1:]
                                  if line.split("\t")[0] in query_ids), encoding="utf-8")
    kept_ids = {"corpus": [d["_id"] for d in docs], "queries": [q["_id"] for q in queries]}
    for name, ids in kept_ids.items():
        np.save(OUT / "embeddings" / f"{name}.npy", _rows(source, name, ids))
        (OUT / "embeddings" / f"{name}.ids.json").write_text(json.dumps(ids), encoding="utf-8")
    print(f"{len(docs)} documents, {len(queries)} queries written to {OUT}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
