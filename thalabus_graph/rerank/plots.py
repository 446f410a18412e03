"""Score plots of a derived dataset: retrieval weight against reranker weight, with marginals.

Optional: needs matplotlib (``pip install 'thalabus-graph[plots]'``); rendered with the Agg
backend, so no display is needed. ``thalabus-graph datasets show DS --histogram FILE.png``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from thalabus_graph.errors import CapabilityError, DatasetError


@dataclass(frozen=True)
class WeightPoint:
    """One member: the retrieval score it arrived with and the weight it got."""

    fragmentid: str
    retrieval: float
    weight: float
    unscored: bool = False


def render_weight_histogram(points: Sequence[WeightPoint], path: str | os.PathLike[str], *,
                            threshold: float, title: str, weight_label: str) -> None:
    """Write a PNG: a scatter of retrieval weight (x) against weight (y), a histogram of each
    axis on its side, and ``threshold`` drawn on the weight axis.

    Members a partly failed rerank left unscored are drawn apart (their weight is their
    retrieval score).

    Raises:
        CapabilityError: matplotlib is not installed.
        DatasetError: no member has a retrieval weight (the dataset was not derived by a
            rerank).
    """
    if not points:
        raise DatasetError("no member has a retrieval weight (original_score): only a dataset "
                           "written by `thalabus-graph rerank` can be plotted")
    try:
        import matplotlib
    except ImportError as exc:
        raise CapabilityError("plots need matplotlib: pip install 'thalabus-graph[plots]'"
                              ) from exc
    matplotlib.use("Agg", force=True)
    from matplotlib import pyplot as plt

    scored = [p for p in points if not p.unscored]
    unscored = [p for p in points if p.unscored]
    fig = plt.figure(figsize=(8, 8), dpi=100)
    grid = fig.add_gridspec(2, 2, width_ratios=(4, 1), height_ratios=(1, 4),
                            wspace=0.05, hspace=0.05)
    ax = fig.add_subplot(grid[1, 0])
    top = fig.add_subplot(grid[0, 0], sharex=ax)
    side = fig.add_subplot(grid[1, 1], sharey=ax)
    try:
        if scored:
            ax.scatter([p.retrieval for p in scored], [p.weight for p in scored], s=12,
                       alpha=0.7, label=f"scored ({len(scored)})")
        if unscored:
            ax.scatter([p.retrieval for p in unscored], [p.weight for p in unscored], s=12,
                       alpha=0.7, marker="x", color="grey", label=f"unscored ({len(unscored)})")
        ax.axhline(threshold, color="red", linestyle="--", label=f"threshold {threshold:g}")
        side.axhline(threshold, color="red", linestyle="--")
        bins = min(40, max(5, len(points) // 3))
        top.hist([p.retrieval for p in points], bins=bins, color="tab:blue", alpha=0.7)
        side.hist([p.weight for p in points], bins=bins, orientation="horizontal",
                  color="tab:orange", alpha=0.7)
        ax.set_xlabel("retrieval weight (original_score)")
        ax.set_ylabel(weight_label)
        ax.legend(loc="best", fontsize="small")
        top.tick_params(labelbottom=False)
        side.tick_params(labelleft=False)
        top.set_title(title, fontsize="medium")
        fig.savefig(os.fspath(path), format="png")
    finally:
        plt.close(fig)
