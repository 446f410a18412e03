"""The synthetic corpus of the scale benchmark: real e5 vectors perturbed, skewed categories.

Used by ``benchmarks.scale``. Nothing here touches Neo4j: the corpus is generated block
by block (deterministic in the seed and the block number, so it is never held in memory whole)
and the ground truth of every query is accumulated with numpy while the blocks stream by.

Chapter i (one per document ``scale-{i}``) copies base document ``b(i)`` of the real sets
(SciFact + XQuAD-R, read from their directories, never copied): its text (cut at
``MAX_TEXT_CHARS``) and the vector ``normalise(base + sigma * noise + mix * second_base)``,
where ``noise`` comes from one of ``GENERATORS`` (both scaled to unit expected norm):

* ``covariance`` (the default): Gaussian with the real vectors' own covariance, so the
  perturbation stays inside the cone real e5 embeddings live in;
* ``isotropic``: Gaussian with the identity covariance, noise not shaped like the real
  vectors (it spreads over every direction, also those real e5 vectors barely use), so the
  index meets a distribution its graph was not tuned on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

DIMENSIONS = 384
BLOCK = 1000
"""Chapters per generated block (one RNG stream per block)."""
DOC_PREFIX = "scale-"
ONTOLOGY = "scale-bench"
MAX_TEXT_CHARS = 1000
RECALL_AT = 10
_P_SKEW = 2_147_483_647
_P_REGION = 1_000_000_007
_P_BASE = 1_000_003
_P_MIX = 998_244_353
"""Primes larger than any chapter count: ``(i * P + c) mod N`` permutes 0..N-1."""
GENERATORS = ("covariance", "isotropic")
"""How the noise added to a base vector is shaped (see the module docstring)."""
DEFAULT_GENERATOR = GENERATORS[0]

SKEW_VALUES: tuple[tuple[str, float], ...] = (
    ("v50", 0.5), ("v10", 0.1), ("v1", 0.01), ("v0_1", 0.001))
"""Category ``SKEW``: these values, then a long tail of values at ``TAIL_FRACTION`` each."""
TAIL_FRACTION = 0.0001
REGION_VALUES: tuple[tuple[str, float], ...] = (("r20", 0.2), ("r5", 0.05))
"""Category ``REGION`` (independent of ``SKEW``): these values, the rest ``rest``."""

Matrix = npt.NDArray[np.float32]
Codes = npt.NDArray[np.int64]


@dataclass(frozen=True)
class RealSets:
    """The base documents and real queries of the shared sets (SciFact, XQuAD-R)."""

    vectors: Matrix
    titles: list[str]
    texts: list[str]
    query_texts: list[str]
    query_vectors: Matrix
    sources: list[str]


def _cut(text: str) -> str:
    """``text`` cut to at most ``MAX_TEXT_CHARS`` at a word boundary."""
    if len(text) <= MAX_TEXT_CHARS:
        return text
    head = text[:MAX_TEXT_CHARS]
    return head[:head.rfind(" ")] if " " in head else head


def _rows(path: Path) -> dict[str, dict[str, Any]]:
    """JSON Lines keyed by ``_id``."""
    out: dict[str, dict[str, Any]] = {}
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                out[str(row["_id"])] = row
    return out


def load_real_sets(dirs: Sequence[Path]) -> RealSets:
    """Read ``corpus.jsonl``, ``queries.jsonl`` and ``embeddings/`` of each directory."""
    vectors, queries, titles, texts, qtexts, sources = [], [], [], [], [], []
    for d in dirs:
        emb = d / "embeddings"
        if not (emb / "corpus.npy").is_file():
            raise SystemExit(f"{d}: no embeddings/corpus.npy (see the set's README)")
        corpus = _rows(d / "corpus.jsonl")
        ids = json.loads((emb / "corpus.ids.json").read_text(encoding="utf-8"))
        vectors.append(np.load(emb / "corpus.npy").astype(np.float32))
        titles += [str(corpus[i].get("title") or "") for i in ids]
        texts += [_cut(str(corpus[i]["text"])) for i in ids]
        qrows = _rows(d / "queries.jsonl")
        qids = json.loads((emb / "queries.ids.json").read_text(encoding="utf-8"))
        queries.append(np.load(emb / "queries.npy").astype(np.float32))
        qtexts += [str(qrows[i]["text"]) for i in qids]
        sources.append(d.name)
    return RealSets(np.concatenate(vectors), titles, texts, qtexts, np.concatenate(queries),
                    sources)


def mean_top10_cosine(vectors: Matrix, sample: Matrix | None = None) -> float:
    """Mean cosine of each row's 10 nearest other rows (a row's own 1.0 left out)."""
    rows = vectors if sample is None else sample
    tops = []
    for start in range(0, len(rows), 1000):
        s = rows[start:start + 1000] @ vectors.T
        if sample is None:
            s[np.arange(len(s)), np.arange(start, start + len(s))] = -np.inf
        tops.append(-np.sort(-s, axis=1)[:, :RECALL_AT])
    return float(np.concatenate(tops).mean())


def noise_map(vectors: Matrix, generator: str) -> Matrix:
    """The matrix turning standard normal rows into the generator's noise (unit expected norm).

    ``covariance``: the transposed Cholesky factor of the real vectors' covariance over the
    square root of its trace; ``isotropic``: the identity over the square root of the dimension.
    """
    if generator == "isotropic":
        return (np.eye(DIMENSIONS) / np.sqrt(DIMENSIONS)).astype(np.float32)
    centred = vectors - vectors.mean(axis=0)
    cov = centred.T.astype(np.float64) @ centred / len(centred)
    scale = float(np.sqrt(np.trace(cov)))
    chol = np.linalg.cholesky(cov + 1e-9 * np.eye(DIMENSIONS))
    out: Matrix = (chol.T / scale).astype(np.float32)
    return out


def _permuted(idx: Codes, n: int, prime: int, offset: int) -> Codes:
    out: Codes = (idx * prime + offset) % n
    return out


def skew_codes(idx: Codes, n: int) -> Codes:
    """``SKEW`` code per chapter: 0..3 for ``SKEW_VALUES``, 4+ for tail values (exact counts)."""
    rank = _permuted(idx, n, _P_SKEW, 7)
    codes = np.full(len(idx), -1, np.int64)
    bound = 0
    for code, (_, fraction) in enumerate(SKEW_VALUES):
        top = bound + round(fraction * n)
        codes[(rank >= bound) & (rank < top) & (codes < 0)] = code
        bound = top
    tail = max(1, round(TAIL_FRACTION * n))
    rest = codes < 0
    codes[rest] = len(SKEW_VALUES) + (rank[rest] - bound) // tail
    return codes


def skew_value(code: int) -> str:
    """The ``SKEW`` value of a code."""
    return SKEW_VALUES[code][0] if code < len(SKEW_VALUES) else f"t{code - len(SKEW_VALUES):05d}"


def region_codes(idx: Codes, n: int) -> Codes:
    """``REGION`` code per chapter: 0..1 for ``REGION_VALUES``, 2 for ``rest``."""
    rank = _permuted(idx, n, _P_REGION, 13)
    codes = np.full(len(idx), len(REGION_VALUES), np.int64)
    bound = 0
    for code, (_, fraction) in enumerate(REGION_VALUES):
        top = bound + round(fraction * n)
        codes[(rank >= bound) & (rank < top)] = code
        bound = top
    return codes


def region_value(code: int) -> str:
    """The ``REGION`` value of a code."""
    return REGION_VALUES[code][0] if code < len(REGION_VALUES) else "rest"


@dataclass
class Block:
    """One generated block: chapter numbers, their base documents, vectors and codes."""

    idx: Codes
    base: Codes
    vectors: Matrix
    skew: Codes
    region: Codes


class Synthesizer:
    """Deterministic synthetic chapters over the real base documents."""

    def __init__(self, real: RealSets, chapters: int, sigma: float, mix: float,
                 seed: int, generator: str = DEFAULT_GENERATOR) -> None:
        if generator not in GENERATORS:
            raise ValueError(f"unknown generator {generator!r} (one of {', '.join(GENERATORS)})")
        self.real = real
        self.n = chapters
        self.sigma = sigma
        self.mix = mix
        self.seed = seed
        self.generator = generator
        self._noise_map: Matrix = noise_map(real.vectors, generator)

    def bases(self, idx: Codes) -> Codes:
        """Base document of each chapter (every base used about equally often)."""
        return _permuted(idx, len(self.real.vectors), _P_BASE, 17)

    def block(self, number: int) -> Block:
        """Block ``number`` of the corpus (chapters ``number * BLOCK ...``)."""
        idx = np.arange(number * BLOCK, min(self.n, (number + 1) * BLOCK), dtype=np.int64)
        base = self.bases(idx)
        second = _permuted(idx, len(self.real.vectors), _P_MIX, 29)
        rng = np.random.default_rng([self.seed, number])
        noise = rng.standard_normal((len(idx), DIMENSIONS), dtype=np.float32) @ self._noise_map
        vec = self.real.vectors[base] + self.sigma * noise + self.mix * self.real.vectors[second]
        vec /= np.linalg.norm(vec, axis=1, keepdims=True)
        return Block(idx, base, vec.astype(np.float32), skew_codes(idx, self.n),
                     region_codes(idx, self.n))

    def blocks(self) -> Iterator[Block]:
        """Every block in order."""
        for number in range((self.n + BLOCK - 1) // BLOCK):
            yield self.block(number)

    def document(self, block: Block, j: int) -> dict[str, Any]:
        """The ingestion input of row ``j`` of ``block``."""
        i, b = int(block.idx[j]), int(block.base[j])
        return {
            "documentid": documentid_for(i), "ontology": ONTOLOGY,
            "title": self.real.titles[b] or f"document {i}",
            "categories": {"SKEW": [skew_value(int(block.skew[j]))],
                           "REGION": [region_value(int(block.region[j]))]},
            "chapters": [self.real.texts[b]], "paragraphs": [[]],
            "embeddings": {"chapters": [block.vectors[j].tolist()]},
        }


def documentid_for(i: int) -> str:
    """Id of chapter i's document."""
    return f"{DOC_PREFIX}{i}"


def chapter_index(fragment_or_doc_id: str) -> int:
    """Chapter number of a document id or its chapter's fragment id."""
    return int(fragment_or_doc_id.removeprefix(DOC_PREFIX).split("-")[0])


def phrase_pattern(phrase: str) -> re.Pattern[str]:
    """Where the words of ``phrase`` follow each other (separators between them ignored)."""
    words = [re.escape(w) for w in phrase.lower().split()]
    return re.compile(r"(?<!\w)" + r"\W+".join(words) + r"(?!\w)")


# --- ground truth --------------------------------------------------------------------------
@dataclass
class TopK:
    """Running top-k (score, chapter) per query row, merged block by block."""

    rows: int
    k: int = RECALL_AT
    scores: npt.NDArray[np.float64] = field(init=False)
    ids: Codes = field(init=False)

    def __post_init__(self) -> None:
        self.scores = np.full((self.rows, 0), -np.inf)
        self.ids = np.zeros((self.rows, 0), np.int64)

    def merge(self, scores: npt.NDArray[np.float64], ids: Codes) -> None:
        """Merge a block's scores (rows x block; ``-inf`` = not a candidate)."""
        all_s = np.concatenate([self.scores, scores], axis=1)
        all_i = np.concatenate([self.ids, np.broadcast_to(ids, scores.shape)], axis=1)
        keep = min(self.k, all_s.shape[1])
        part = np.argpartition(-all_s, keep - 1, axis=1)[:, :keep]
        self.scores = np.take_along_axis(all_s, part, axis=1)
        self.ids = np.take_along_axis(all_i, part, axis=1)

    def truth(self, row: int) -> set[int]:
        """The chapters of a row's top-k that are candidates at all."""
        return {int(i) for s, i in zip(self.scores[row], self.ids[row], strict=True)
                if s > -np.inf}

    def mean_score(self) -> float:
        """Mean of the finite scores kept."""
        finite = self.scores[np.isfinite(self.scores)]
        return float(finite.mean()) if finite.size else float("nan")
