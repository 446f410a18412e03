"""Search rows as fragments: one vector source's hits with its factor, cap and floor, one
full-text source's hits divided by its best, category stubs, id sets."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from thalabus_graph.fragments import CATEGORY_SOURCE, Fragment, sort_fragments, stub
from thalabus_graph.graph.database import Record
from thalabus_graph.plan.steps import Restriction, VectorSource
from thalabus_graph.scoring.scale import semantic_scaler
from thalabus_graph.settings import Settings

Hit = tuple[str, str, str | None, float]
"""One search hit: fragment id, document id, text, score."""


def hits_of(rows: Iterable[Record]) -> list[Hit]:
    """Records of the one-row-per-hit statements as hits, in their order."""
    return [(r["fragmentid"], r["documentid"], r["text"], r["score"]) for r in rows]


def semantic_fragments(settings: Settings, src: VectorSource,
                       hits: Iterable[Hit]) -> list[Fragment]:
    """Hits of one vector source as fragments: on the index scale when a calibration applies
    (factor, cap and ``min_score`` act after fusion, ``scale.PhraseScale``), else per-source
    factor and cap, then ``min_score``."""
    contribution = (f"semantic:{src.source}",)
    scaled = semantic_scaler(settings, src.source)
    out: list[Fragment] = []
    for fragmentid, documentid, text, raw in hits:
        score = scaled(raw)
        if score is not None:
            out.append(Fragment(fragmentid, documentid, text, score, src.source, contribution))
    return out


def text_fragments(settings: Settings, source: str, hits: Sequence[Hit],
                   best: float, top_n: int | None = None) -> list[Fragment]:
    """The best ``top_n`` (default ``top_n_text``) hits of one full-text source (sorted best
    first) as fragments, scores divided by ``best``."""
    if best <= 0:
        return []
    contribution = (f"text:{source}",)
    kept = settings.top_n_text if top_n is None else top_n
    return [Fragment(fragmentid, documentid, text, float(score) / best, source, contribution)
            for fragmentid, documentid, text, score in hits[:kept]]


def stored_language(value: Any) -> str | None:
    """A stored language as the fusion sees it: None when missing or empty."""
    return str(value) if value else None


def id_set(rows: Sequence[Record]) -> Restriction:
    """The ``documentids`` list of a one-record id query, as a set."""
    return frozenset(rows[0]["documentids"]) if rows else frozenset()


def stubs(documentids: Iterable[str], contribution: str = CATEGORY_SOURCE) -> list[Fragment]:
    """Category stubs for the documents, sorted."""
    return sort_fragments(stub(d, (contribution,)) for d in documentids)
