"""The reliability diagram ``thalabus-graph calibrate --report`` draws: matplotlib (the
``plots`` extra) on a file-only backend, asked for before any fit so a missing extra is said
at once, and the drawing of a held-out report as a PNG or SVG."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from thalabus_graph.errors import ConfigurationError


def pyplot() -> Any:
    """``matplotlib.pyplot`` on a file-only backend, or a ``ConfigurationError`` naming the
    extra that installs it."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ConfigurationError("--report draws with matplotlib, which is not installed: "
                                 "pip install 'thalabus-graph[plots]'") from exc
    return plt


def draw(report: dict[str, Any], path: Path) -> None:
    """The reliability diagram of a ``held_out_report`` as an image (format by suffix): the
    frequency of relevant candidates against the mean score per bin, the diagonal where they
    are equal, and the share of the weight in each bin."""
    plt = pyplot()
    bins = report["reliability"]["bins"]
    filled = [b for b in bins if b["score"] is not None]
    figure, (curve, mass) = plt.subplots(2, 1, figsize=(5.5, 6.5), sharex=True,
                                         gridspec_kw={"height_ratios": [3, 1]})
    curve.plot([0, 1], [0, 1], linestyle="--", color="grey", label="perfectly calibrated")
    curve.bar([b["low"] for b in filled], [b["frequency"] for b in filled],
              width=1 / len(bins), align="edge", alpha=0.35, edgecolor="black",
              label="relevant share per bin")
    curve.plot([b["score"] for b in filled], [b["frequency"] for b in filled], marker="o",
               label="mean score -> relevant share")
    curve.set_ylabel(f"share relevant (prior odds {report['prior_odds']:.4f})")
    curve.set_xlim(0, 1)
    curve.set_ylim(0, 1)
    curve.legend(loc="upper left", fontsize=8)
    held = ", ".join(f"{name} ({n})" for name, n in report["queries"].items()
                     if name.endswith("held out"))
    curve.set_title(f"{report['model']}: ECE {report['ece']:.3f} on held-out queries\n{held}",
                    fontsize=9)
    mass.bar([b["low"] for b in bins], [b["weight"] for b in bins], width=1 / len(bins),
             align="edge", edgecolor="black")
    mass.set_xlabel("calibrated score")
    mass.set_ylabel("weight share")
    figure.tight_layout()
    try:
        figure.savefig(path, dpi=110)
    except OSError as exc:
        raise ConfigurationError(f"cannot write {path}: {exc}") from exc
    finally:
        plt.close(figure)
