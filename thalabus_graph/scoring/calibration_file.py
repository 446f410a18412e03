"""The calibration file: the JSON form of a ``Calibration``, read, written and checked.

``thalabus_graph.scoring.calibration`` holds the model (what a calibration computes); this module
holds its stored form (``FORMAT``): what ``thalabus-graph calibrate`` writes, what the
package ships per embedding model and what ``THALABUS_CALIBRATION_FILE`` points at.

A calibration file is configuration that every semantic query reads, so it is checked field
by field when read (``from_dict``: types, ranges, no unknown field) and a wrong one is a
``ConfigurationError`` naming the file and the field, not a failure deep inside a search. It
is read only when it is a regular file and at most ``MAX_FILE_BYTES`` long (``read_bounded``):
a device such as ``/dev/zero`` would otherwise be read until memory runs out, and a FIFO
would block the reader. The same check runs before a file is written (``save``), so a file
``calibrate`` writes always loads.
"""

from __future__ import annotations

import json
import math
import os
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from thalabus_graph.errors import ConfigurationError
from thalabus_graph.scoring.calibration import DEFAULT_SKIP, Calibration, Gate, SourceMap

FORMAT = "thalabus-calibration/1"
"""The ``format`` field of a calibration file."""
FEATURE = "tail-evidence"
"""The ``feature`` field: what the maps read (``calibration.evidence``)."""
MAX_FILE_BYTES = 1 << 20
"""Largest calibration file read (1 MiB; a shipped one is under 2 KiB)."""
MAX_SKIP = 10_000
"""Largest ``skip`` (more ranks than any candidate list holds)."""
MAX_COEFFICIENT = 1e4
"""Largest absolute intercept or slope of a map or a gate (shipped ones are under 200)."""
MIN_MAP_SLOPE = 0.1
"""Smallest map slope: below it the logit moves by less than 1 over ten orders of magnitude
of tail evidence, so every hit reads as about the same probability (a degenerate fit)."""
MAX_NAMES = 64
"""Most source maps and ``fitted_on`` entries."""
MAX_NAME_CHARS = 256
"""Longest model, source or data-set name."""
FIELDS = frozenset({"format", "model", "feature", "skip", "fitted_on", "sources", "gate",
                    "foreign_gate", "reading", "measured"})
"""Every field a calibration file may hold."""
_MAP_FIELDS = frozenset({"intercept", "slope"})
_GATE_FIELDS = frozenset({"intercept", "slope", "share_slope"})


def to_dict(calibration: Calibration) -> dict[str, Any]:
    """The JSON form (``FORMAT``)."""
    return {"format": FORMAT, "model": calibration.model, "feature": FEATURE,
            "skip": calibration.skip, "fitted_on": list(calibration.fitted_on),
            "sources": {name: {"intercept": m.intercept, "slope": m.slope}
                        for name, m in sorted(calibration.sources.items())},
            **({"gate": calibration.gate.to_dict()} if calibration.gate else {}),
            **({"foreign_gate": calibration.foreign_gate.to_dict()}
               if calibration.foreign_gate else {}),
            **({"reading": {"intercept": calibration.reading.intercept,
                            "slope": calibration.reading.slope}}
               if calibration.reading else {}),
            "measured": dict(calibration.measured)}


def from_dict(data: Any, origin: str = "calibration") -> Calibration:
    """Read the JSON form, every field checked (``FIELDS``; numbers finite and within their
    ranges, maps increasing and not near-constant, gates increasing). Anything else is a
    ``ConfigurationError`` that names ``origin`` (the file) and the field."""

    def wrong(field: str, what: str) -> ConfigurationError:
        return ConfigurationError(f"{origin}: field {field!r} {what}; fix the file, write it "
                                  "again with thalabus-graph calibrate, or set "
                                  "THALABUS_CALIBRATION_FILE=none")

    if not isinstance(data, Mapping):
        raise ConfigurationError(f"{origin}: not a calibration file (a JSON object expected, "
                                 f"found {type(data).__name__})")
    if data.get("format") != FORMAT:
        raise ConfigurationError(f"{origin}: not a calibration file (format "
                                 f"{_shown(data.get('format'))}, expected {FORMAT!r})")
    unknown = sorted(str(k) for k in data if k not in FIELDS)
    if unknown:
        raise wrong(unknown[0], f"is not a calibration field (known: {', '.join(sorted(FIELDS))})")
    model = _name(data.get("model"), "model", wrong)
    if data.get("feature", FEATURE) != FEATURE:
        raise wrong("feature", f"must be {FEATURE!r} (found {_shown(data.get('feature'))})")
    skip = data.get("skip", DEFAULT_SKIP)
    if isinstance(skip, bool) or not isinstance(skip, int) or not 0 <= skip <= MAX_SKIP:
        raise wrong("skip", f"must be a whole number from 0 to {MAX_SKIP} (found "
                            f"{_shown(skip)})")
    fitted_on = data.get("fitted_on", [])
    if not isinstance(fitted_on, list) or len(fitted_on) > MAX_NAMES:
        raise wrong("fitted_on", f"must be a list of at most {MAX_NAMES} names")
    names = tuple(_name(n, "fitted_on", wrong) for n in fitted_on)
    raw_sources = data.get("sources")
    if not isinstance(raw_sources, Mapping) or not 0 < len(raw_sources) <= MAX_NAMES:
        raise wrong("sources", f"must map 1 to {MAX_NAMES} source names to their maps "
                               "({\"intercept\": ..., \"slope\": ...})")
    sources: dict[str, SourceMap] = {}
    for name, raw in raw_sources.items():
        field = f"sources.{_name(name, 'sources', wrong)}"
        values = _numbers(raw, field, _MAP_FIELDS, _MAP_FIELDS, wrong)
        if not MIN_MAP_SLOPE <= values["slope"] <= MAX_COEFFICIENT:
            raise wrong(f"{field}.slope", f"must be from {MIN_MAP_SLOPE} to {MAX_COEFFICIENT:g} "
                                          f"(found {values['slope']!r}; a smaller slope scores "
                                          "every hit about the same)")
        sources[str(name)] = SourceMap(values["intercept"], values["slope"])
    gate = _gate(data.get("gate"), "gate", wrong)
    foreign_gate = _gate(data.get("foreign_gate"), "foreign_gate", wrong)
    if foreign_gate is not None and (gate is None or foreign_gate.share_slope is not None):
        raise wrong("foreign_gate", "reads the best cosine alone (no share_slope) and needs "
                                    "a gate beside it")
    reading = _reading(data.get("reading"), wrong)
    measured = data.get("measured", {})
    if not isinstance(measured, Mapping):
        raise wrong("measured", f"must be a JSON object (found {type(measured).__name__})")
    return Calibration(model, sources, skip, names, dict(measured), gate, foreign_gate,
                       reading)


def _shown(value: Any) -> str:
    """A value as an error message shows it: its repr, cut to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _name(value: Any, field: str, wrong: Any) -> str:
    """A non-empty name of at most ``MAX_NAME_CHARS`` characters."""
    if not isinstance(value, str) or not 0 < len(value) <= MAX_NAME_CHARS:
        raise wrong(field, f"must hold names of 1 to {MAX_NAME_CHARS} characters (found "
                           f"{_shown(value)})")
    return value


def _numbers(raw: Any, field: str, required: frozenset[str], allowed: frozenset[str],
             wrong: Any) -> dict[str, float]:
    """The finite numbers of a map's or a gate's JSON object, each at most
    ``MAX_COEFFICIENT`` in size; a missing, unknown or non-numeric key is named."""
    if not isinstance(raw, Mapping):
        raise wrong(field, f"must be a JSON object with {', '.join(sorted(required))}")
    for key in sorted(required - set(raw)):
        raise wrong(f"{field}.{key}", "is missing")
    for key in sorted(str(k) for k in raw if k not in allowed):
        raise wrong(f"{field}.{key}", f"is not a field here (known: {', '.join(sorted(allowed))})")
    out: dict[str, float] = {}
    for key, value in raw.items():
        if (isinstance(value, bool) or not isinstance(value, int | float)
                or not math.isfinite(value) or abs(value) > MAX_COEFFICIENT):
            raise wrong(f"{field}.{key}", f"must be a finite number of at most "
                                          f"{MAX_COEFFICIENT:g} in size (found {_shown(value)})")
        out[str(key)] = float(value)
    return out


def _gate(raw: Any, field: str, wrong: Any) -> Gate | None:
    """A gate's JSON form read and checked (absent: None); its slopes must be positive."""
    if raw is None:
        return None
    values = _numbers(raw, field, _MAP_FIELDS, _GATE_FIELDS, wrong)
    for key in ("slope", "share_slope"):
        if key in values and not values[key] > 0:
            raise wrong(f"{field}.{key}", f"must be positive (found {values[key]!r}): a gate "
                                          "rises with the best cosine and the shared words")
    return Gate(values["intercept"], values["slope"], values.get("share_slope"))


def _reading(raw: Any, wrong: Any) -> SourceMap | None:
    """The reading's JSON form read and checked (absent: None); its slope must be positive."""
    if raw is None:
        return None
    values = _numbers(raw, "reading", _MAP_FIELDS, _MAP_FIELDS, wrong)
    if not values["slope"] > 0:
        raise wrong("reading.slope", f"must be positive (found {values['slope']!r}): a "
                                     "reading keeps the order of the scores")
    return SourceMap(values["intercept"], values["slope"])


def check(calibration: Calibration, origin: str = "calibration") -> None:
    """Raise ``ConfigurationError`` unless ``calibration``'s JSON form is finite and reads
    back: every field within the ranges ``from_dict`` checks."""
    try:
        text = json.dumps(to_dict(calibration), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ConfigurationError(f"{origin}: a value cannot be written as JSON (NaN, an "
                                 f"infinity or not a number): {exc}") from exc
    from_dict(json.loads(text), origin)


def save(calibration: Calibration, path: Path) -> None:
    """Write the JSON form to ``path``, checked first (``check``) and written whole (a
    temporary file beside it, renamed), so a reader never sees half a file."""
    check(calibration, str(path))
    text = json.dumps(to_dict(calibration), indent=2, allow_nan=False) + "\n"
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or ".")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise ConfigurationError(f"cannot write calibration file {path}: {exc}") from exc


def read_bounded(path: Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes, else ``ConfigurationError``.

    Opened with ``O_NONBLOCK`` (opening a FIFO then returns at once) and checked on the open
    file (``fstat``), so a device, a FIFO or a socket is refused before anything is read; at
    most ``limit + 1`` bytes are ever read, so a file that grows meanwhile is refused too."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise ConfigurationError(f"cannot read calibration file {path}: {exc}") from exc
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):  # checked before fdopen, which refuses a directory
        os.close(fd)
        raise ConfigurationError(f"calibration file {path} is not a regular file; point "
                                 "THALABUS_CALIBRATION_FILE at a file calibrate wrote")
    with os.fdopen(fd, "rb") as handle:
        if info.st_size > limit:
            raise ConfigurationError(_too_large(path, limit))
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise ConfigurationError(f"cannot read calibration file {path}: {exc}") from exc
    if len(data) > limit:
        raise ConfigurationError(_too_large(path, limit))
    return data


def _too_large(path: Path, limit: int) -> str:
    return (f"calibration file {path} is larger than {limit} bytes; a calibration file is a "
            "few kilobytes: point THALABUS_CALIBRATION_FILE at one calibrate wrote")


def load(path: Path) -> Calibration:
    """Read a calibration file (``read_bounded``, then ``from_dict``); a missing, unreadable,
    oversized or malformed file is a ``ConfigurationError`` naming it."""
    raw = read_bounded(path)
    origin = f"calibration file {path}"
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigurationError(f"{origin} is not UTF-8 text: {exc}") from exc
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ConfigurationError(f"{origin} is not valid JSON: "
                                 f"{exc if isinstance(exc, ValueError) else 'nested too deep'}"
                                 ) from exc
    except ValueError as exc:  # an integer of more digits than Python reads
        raise ConfigurationError(f"{origin} holds an unreadable number: {exc}") from exc
    return from_dict(data, origin)
