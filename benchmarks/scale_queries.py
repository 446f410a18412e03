"""The scale benchmark's queries: the shapes, each shape's rounds, and their exact answers.

Used by ``benchmarks.scale`` (and the benchmarks built on its corpus). ``Truth`` folds
every generated block into the exact answer of every planned query with numpy, while the
corpus streams into the engine, so the answers never come from the engine.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from benchmarks.quality import semantic_phrase
from benchmarks.scale_corpus import (
    BLOCK,
    DIMENSIONS,
    Block,
    RealSets,
    Synthesizer,
    TopK,
    phrase_pattern,
)
from thalabus_graph import ThalabusSyntaxError
from thalabus_graph.embeddings import Vectors

Mask = Callable[[Block], npt.NDArray[np.bool_]]


# --- shapes --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Shape:
    """One query shape: its template, which chapters match, and graphrag's filter if any.

    ``kind``: ``semantic`` (top 10 by cosine among ``mask``), ``or`` (top 10 by the larger
    cosine of two phrases), ``text`` (chapters containing a phrase), ``filter`` (all of
    ``mask``). ``anchor``: whether graphrag runs it (``filters`` None = unfiltered).
    """

    name: str
    kind: str
    template: str
    mask: Mask | None = None
    anchor: bool = False
    filters: dict[str, Any] | None = None


def _skew(code: int) -> Mask:
    return lambda b: b.skew == code


def shapes() -> list[Shape]:
    """The query shapes measured at scale: a phrase alone and under filters of each
    selectivity, NOT, nested, a chain of filters as users write it (no parentheses), OR,
    full text and a pure filter."""
    return [
        Shape("phrase", "semantic", "{p}", None, anchor=True),
        Shape("and_50%", "semantic", "{p} AND SKEW=v50", _skew(0), True,
              {"cat_SKEW": {"$eq": "v50"}}),
        Shape("and_10%", "semantic", "{p} AND SKEW=v10", _skew(1), True,
              {"cat_SKEW": {"$eq": "v10"}}),
        Shape("and_1%", "semantic", "{p} AND SKEW=v1", _skew(2), True,
              {"cat_SKEW": {"$eq": "v1"}}),
        Shape("and_0.1%", "semantic", "{p} AND SKEW=v0_1", _skew(3), True,
              {"cat_SKEW": {"$eq": "v0_1"}}),
        Shape("and_0.01%", "semantic", "{p} AND SKEW=t00000", _skew(4), True,
              {"cat_SKEW": {"$eq": "t00000"}}),
        Shape("and_not_50%", "semantic", "{p} AND NOT SKEW=v50", lambda b: b.skew != 0, True,
              {"cat_SKEW": {"$ne": "v50"}}),
        Shape("nested", "semantic", "{p} AND (SKEW=v10 OR (REGION=r5 AND NOT SKEW=v50))",
              lambda b: (b.skew == 1) | ((b.region == 1) & (b.skew != 0)), True,
              {"$or": [{"cat_SKEW": {"$eq": "v10"}},
                       {"$and": [{"cat_REGION": {"$eq": "r5"}},
                                 {"cat_SKEW": {"$ne": "v50"}}]}]}),
        Shape("and_chain", "semantic", "{p} AND SKEW=v10 AND NOT REGION=r20",
              lambda b: (b.skew == 1) & (b.region != 0), True,
              {"$and": [{"cat_SKEW": {"$eq": "v10"}}, {"cat_REGION": {"$ne": "r20"}}]}),
        Shape("or_phrases", "or", "{p} OR {p2}"),
        Shape("fulltext", "text", "{t}"),
        Shape("filter_1%", "filter", "SKEW=v1", _skew(2)),
    ]


@dataclass
class Round:
    """One query of a shape: the Thalabus text, its phrases and full-text phrase."""

    text: str
    phrases: tuple[str, ...] = ()
    fulltext: str | None = None


class LookupEmbedder:
    """An ``Embedder`` answering query texts with the real sets' precomputed vectors."""

    def __init__(self, vectors: dict[str, npt.NDArray[np.float32]]) -> None:
        self.vectors = vectors

    @property
    def dimensions(self) -> int:
        """Vector length."""
        return DIMENSIONS

    @property
    def model_id(self) -> str:
        """The model the stored vectors come from."""
        return "multilingual-e5-small-precomputed"

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """The stored vector of each text (a clear error for a text the sets do not have)."""
        missing = [t for t in texts if t not in self.vectors]
        if missing:
            raise KeyError(f"no precomputed query vector for {missing[0]!r}")
        if not texts:
            return np.zeros((0, DIMENSIONS), np.float32)
        return np.stack([self.vectors[t] for t in texts])

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        """Not used: the corpus brings its vectors."""
        raise NotImplementedError("the scale corpus supplies its embeddings")


def plan_rounds(shape_list: list[Shape], real: RealSets, synth: Synthesizer, rounds: int,
                seed: int) -> tuple[dict[str, list[Round]], dict[str, npt.NDArray[np.float32]]]:
    """Per shape, ``rounds`` queries (distinct real queries; full-text phrases from bases)."""
    rng = np.random.default_rng([seed, 1])
    lookup: dict[str, npt.NDArray[np.float32]] = {}
    usable: list[str] = []
    for text, vec in zip(real.query_texts, real.query_vectors, strict=True):
        try:
            semantic_phrase(text)
        except (ValueError, ThalabusSyntaxError):
            continue
        if text not in lookup:
            lookup[text] = vec
            usable.append(text)
    order = [usable[i] for i in rng.permutation(len(usable))]
    pos = 0

    def take() -> str:
        nonlocal pos
        pos += 1
        return str(order[(pos - 1) % len(order)])

    plans: dict[str, list[Round]] = {}
    for shape in shape_list:
        out: list[Round] = []
        for _ in range(rounds):
            if shape.kind == "semantic":
                p = take()
                out.append(Round(shape.template.format(p=semantic_phrase(p)), (p,)))
            elif shape.kind == "or":
                p, p2 = take(), take()
                out.append(Round(shape.template.format(p=semantic_phrase(p),
                                                       p2=semantic_phrase(p2)), (p, p2)))
            elif shape.kind == "text":
                t = text_phrase(real, synth, rng)
                out.append(Round(shape.template.format(t=f"'{t}'"), fulltext=t))
            else:
                out.append(Round(shape.template))
        plans[shape.name] = out
    return plans, lookup


def text_phrase(real: RealSets, synth: Synthesizer, rng: np.random.Generator) -> str:
    """Two consecutive lower-case words (4+ letters) of a base document used by the corpus."""
    while True:
        i = int(rng.integers(0, synth.n))
        words = real.texts[int(synth.bases(np.array([i]))[0])].split(" ")
        pairs = [(a, b) for a, b in itertools.pairwise(words)
                 if len(a) >= 4 and len(b) >= 4 and a.isalpha() and b.isalpha()
                 and a.islower() and b.islower()]
        if pairs:
            a, b = pairs[int(rng.integers(0, len(pairs)))]
            return f"{a} {b}"


# --- ground truth while streaming ----------------------------------------------------------
@dataclass
class ShapeTruth:
    """What the benchmark knows about one shape's queries once the corpus has streamed."""

    shape: Shape
    rounds: list[Round]
    matching: int = 0
    top: TopK | None = None
    vectors: list[npt.NDArray[np.float32]] = field(default_factory=list)
    base_match: list[npt.NDArray[np.bool_]] = field(default_factory=list)
    text_matching: list[int] = field(default_factory=list)
    members: list[npt.NDArray[np.int64]] = field(default_factory=list)


class Truth:
    """Exact answers of every planned query, accumulated block by block (numpy only)."""

    def __init__(self, shape_list: list[Shape], plans: dict[str, list[Round]],
                 lookup: dict[str, npt.NDArray[np.float32]], real: RealSets) -> None:
        self.shapes: dict[str, ShapeTruth] = {}
        for shape in shape_list:
            st = ShapeTruth(shape, plans[shape.name])
            if shape.kind in ("semantic", "or"):
                st.top = TopK(len(st.rounds))
                width = 1 if shape.kind == "semantic" else 2
                st.vectors = [np.stack([lookup[r.phrases[w]] for r in st.rounds]).astype(
                    np.float32) for w in range(width)]
            if shape.kind == "text":
                texts = [t.lower() for t in real.texts]
                for r in st.rounds:
                    pattern = phrase_pattern(r.fulltext or "")
                    st.base_match.append(np.array([bool(pattern.search(t)) for t in texts]))
                st.text_matching = [0] * len(st.rounds)
            self.shapes[shape.name] = st
        self.sample: npt.NDArray[np.float32] | None = None
        self.sample_top: TopK | None = None

    def update(self, block: Block) -> None:
        """Fold one block into every shape's answer and the synthetic top-10 sample."""
        vt = block.vectors.T
        for st in self.shapes.values():
            mask = st.shape.mask(block) if st.shape.mask else np.ones(len(block.idx), bool)
            st.matching += int(mask.sum())
            if st.top is not None:
                scores = np.max([(v @ vt) for v in st.vectors], axis=0).astype(np.float64)
                scores[:, ~mask] = -np.inf
                st.top.merge(scores, block.idx)
            for j, bm in enumerate(st.base_match):
                st.text_matching[j] += int(bm[block.base].sum())
            if st.shape.kind == "filter":
                st.members.append(block.idx[mask])
        if self.sample is None:
            self.sample = block.vectors.copy()
            self.sample_top = TopK(len(self.sample))
        assert self.sample_top is not None
        s = (self.sample @ vt).astype(np.float64)
        own = block.idx < len(self.sample)
        s[block.idx[own], np.flatnonzero(own)] = -np.inf
        self.sample_top.merge(s, block.idx)


def stream(synth: Synthesizer, truth: Truth, say: Callable[[str], None]) -> Iterator[
        dict[str, Any]]:
    """The corpus as ingestion input, one block at a time, folding each block into ``truth``."""
    start = time.perf_counter()
    for block in synth.blocks():
        truth.update(block)
        for j in range(len(block.idx)):
            yield synth.document(block, j)
        done = int(block.idx[-1]) + 1
        if done % (BLOCK * 20) == 0 or done == synth.n:
            rate = done / max(time.perf_counter() - start, 1e-9)
            say(f"  {done} / {synth.n} chapters generated ({rate:.0f}/s)")
