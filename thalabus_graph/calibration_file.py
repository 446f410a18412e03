"""The calibration file: the JSON form of a ``Calibration``, read, written and checked.

``thalabus_graph.calibration`` holds the model (what a calibration computes); this module
holds its stored form (``FORMAT``): what ``thalabus-graph calibrate`` writes, what the
package ships per embedding model and what ``THALABUS_CALIBRATION_FILE`` points at.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from thalabus_graph.calibration import DEFAULT_SKIP, Calibration, Gate, SourceMap
from thalabus_graph.errors import ConfigurationError

FORMAT = "thalabus-calibration/1"
"""The ``format`` field of a calibration file."""


def to_dict(calibration: Calibration) -> dict[str, Any]:
    """The JSON form (``FORMAT``)."""
    return {"format": FORMAT, "model": calibration.model, "feature": "tail-evidence",
            "skip": calibration.skip, "fitted_on": list(calibration.fitted_on),
            "sources": {name: {"intercept": m.intercept, "slope": m.slope}
                        for name, m in sorted(calibration.sources.items())},
            **({"gate": calibration.gate.to_dict()} if calibration.gate else {}),
            **({"foreign_gate": calibration.foreign_gate.to_dict()}
               if calibration.foreign_gate else {}),
            "measured": dict(calibration.measured)}


def from_dict(data: Mapping[str, Any]) -> Calibration:
    """Read the JSON form; a wrong format or a non-increasing map is a
    ``ConfigurationError``."""
    if data.get("format") != FORMAT:
        raise ConfigurationError(f"not a calibration file (format {data.get('format')!r}, "
                                 f"expected {FORMAT!r})")
    try:
        sources = {str(name): SourceMap(float(m["intercept"]), float(m["slope"]))
                   for name, m in dict(data["sources"]).items()}
        skip = int(data.get("skip", DEFAULT_SKIP))
        model = str(data["model"])
        gate = _gate_from(data.get("gate"))
        foreign_gate = _gate_from(data.get("foreign_gate"))
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise ConfigurationError(f"calibration file is malformed: {exc}") from exc
    bad = [n for n, m in sources.items()
           if not (m.slope > 0 and math.isfinite(m.slope) and math.isfinite(m.intercept))]
    if bad or not sources:
        raise ConfigurationError("a calibration map must have a finite positive slope "
                                 f"(check {', '.join(bad) or 'sources'})")
    for found in (gate, foreign_gate):
        slopes = () if found is None else (found.slope, 1.0 if found.share_slope is None
                                           else found.share_slope)
        if found is not None and not (all(x > 0 and math.isfinite(x) for x in slopes)
                                      and math.isfinite(found.intercept)):
            raise ConfigurationError("a calibration gate must have a finite positive "
                                     "slope (and share slope)")
    if foreign_gate is not None and (gate is None or foreign_gate.share_slope is not None):
        raise ConfigurationError("a foreign_gate reads the best cosine alone (no "
                                 "share_slope) and needs a gate beside it")
    return Calibration(model, sources, skip, tuple(data.get("fitted_on", ())),
                       dict(data.get("measured", {})), gate, foreign_gate)


def save(calibration: Calibration, path: Path) -> None:
    """Write the JSON form to ``path``."""
    path.write_text(json.dumps(to_dict(calibration), indent=2) + "\n", encoding="utf-8")


def load(path: Path) -> Calibration:
    """Read a calibration file; a missing or unreadable file is a ``ConfigurationError``."""
    try:
        return from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigurationError(f"cannot read calibration file {path}: {exc}") from exc


def _gate_from(raw: Mapping[str, Any] | None) -> Gate | None:
    """A gate's JSON form read (None stays None; a missing key raises ``KeyError``)."""
    if raw is None:
        return None
    share_slope = raw.get("share_slope")
    return Gate(float(raw["intercept"]), float(raw["slope"]),
                float(share_slope) if share_slope is not None else None)
