"""Validation of the ingest input one field at a time: each function checks one JSON value.

One job: the rules a single field of an input document passes (the documentid, optional
strings, extra properties, categories, text lists, explicit paragraphs, supplied embeddings),
each raising :class:`IngestError` with the message a line error shows, so ``ingest.parsing``
only assembles a document from values that already passed. The format they enforce is stated
in ``ingest.source``.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from thalabus_graph.errors import IngestError
from thalabus_graph.ingest.source import (
    ENGINE_PROPERTIES,
    INT64_MAX,
    INT64_MIN,
    MAX_KEY_BYTES,
    FragmentKind,
    Scalar,
    SourceDocument,
    SourceFragment,
)
from thalabus_graph.query.ast import NAME_PATTERN, id_form
from thalabus_graph.vectors import vector_problem

_FRAGMENT_SUFFIX_RE = re.compile(r"-[cpsqk][0-9]+\Z")
_BAD_ID_CHARS_RE = re.compile(r"[\s\x00-\x1f\x7f]")
_RESERVED = frozenset({
    "documentid", "ontology", "title", "language", "categories", "chapters", "paragraphs",
    "summaries", "questions", "keywords", "embeddings",
})
FIELD_SIMILAR = 0.8
"""How alike a key and a reserved field name must be (``difflib`` ratio, lowercased) for the
key to be called a likely misspelling of it: one letter in a word of five or more."""
_SINGULAR: Mapping[str, str] = {
    "chapter": "chapters", "paragraph": "paragraphs", "summary": "summaries",
    "question": "questions", "keyword": "keywords", "embedding": "embeddings",
    "category": "categories",
}
_KIND_KEYS: Mapping[str, FragmentKind] = {
    "chapters": "chapter", "paragraphs": "paragraph", "summaries": "summary",
    "questions": "question",
}


def documentid(value: Any) -> str:
    """The documentid: a non-empty string of at most ``MAX_KEY_BYTES``, without whitespace
    or control characters, not ending like a fragment id (a stub uses it as its id)."""
    if value is None:
        raise IngestError("missing documentid")
    if not isinstance(value, str):
        raise IngestError(f"documentid must be a string, not {json_type(value)}")
    if not value:
        raise IngestError("documentid is empty")
    _check_key(value, "documentid")
    if _BAD_ID_CHARS_RE.search(value):
        raise IngestError(f"documentid {value!r} contains whitespace or control characters")
    if _FRAGMENT_SUFFIX_RE.search(value):
        raise IngestError(
            f"documentid {value!r} ends like a fragment id (-c1, -p2, -s3, -q4, -k5); "
            "it would collide with another document's fragments")
    return value


def optional_str(obj: dict[str, Any], key: str, *, allow_blank: bool) -> str | None:
    """The string under ``key``, or None when absent; an ontology is an indexed key (its id
    form), any other string is text (NFC)."""
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise IngestError(f"{key} must be a string, not {json_type(value)}")
    if not allow_blank and not value.strip():
        raise IngestError(f"{key} is blank")
    if key == "ontology":
        _check_key(value, key)
        return id_form(value)
    _check_text(value, key)
    return _nfc(value)


def field_like(key: str) -> str | None:
    """The reserved field ``key`` looks like a misspelling of (``Chapters``, ``chapter``,
    ``catgories``), else None: such a key is stored as an extra property, which a typo in a
    field name would otherwise make silent."""
    if key in _RESERVED:
        return None
    lowered = key.lower()
    if lowered in _RESERVED:
        return lowered
    if lowered in _SINGULAR:
        return _SINGULAR[lowered]
    found = difflib.get_close_matches(lowered, sorted(_RESERVED), n=1, cutoff=FIELD_SIMILAR)
    return found[0] if found else None


def field_notices(doc: SourceDocument) -> list[str]:
    """What to tell about ``doc``'s extra properties named like a misspelt field: each is
    stored as a property, and the field it resembles is not read from it."""
    out = []
    for key in doc.properties:
        like = field_like(key)
        if like is not None:
            out.append(f"{key!r} is stored as a Document property; did you mean the field "
                       f"{like!r}?")
    return out


def _field_hint(key: str) -> str:
    like = field_like(key)
    return "" if like is None else f" (did you mean the field {like!r}?)"


def properties(obj: dict[str, Any]) -> dict[str, Scalar]:
    """The extra properties: every non-null key the format does not reserve, a scalar under
    a property name the engine does not use itself (``ENGINE_PROPERTIES``)."""
    props: dict[str, Scalar] = {}
    for key, value in obj.items():
        if key in _RESERVED or value is None:
            continue
        if not isinstance(key, str) or not NAME_PATTERN.fullmatch(key):
            raise IngestError(f"property name {key!r} must match {NAME_PATTERN.pattern}")
        if key in ENGINE_PROPERTIES:
            raise IngestError(
                f"property name {key!r} is reserved: the engine stores its own {key} on "
                f"documents and fragments (reserved: {', '.join(sorted(ENGINE_PROPERTIES))}"
                f"); rename the property{_field_hint(key)}")
        if isinstance(value, float) and not math.isfinite(value):
            raise IngestError(f"property {key!r} is not a finite number")
        if not isinstance(value, str | int | float | bool):
            raise IngestError(
                f"property {key!r} must be a string, number or boolean, "
                f"not {json_type(value)}{_field_hint(key)}")
        if isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
            raise IngestError(f"property {key!r} is an integer outside the signed 64-bit "
                           "range Neo4j stores (write it as a string)")
        if isinstance(value, str):
            _check_text(value, f"property {key!r}")
        props[key] = value
    return props


def categories(value: Any) -> dict[str, tuple[str, ...]]:
    """Category name -> its values (id form, de-duplicated in order); a category without
    values is left out, the same as none."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise IngestError(f"categories must be an object, not {json_type(value)}")
    result: dict[str, tuple[str, ...]] = {}
    for name, raw in value.items():
        if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
            raise IngestError(f"category name {name!r} must match {NAME_PATTERN.pattern}")
        _check_key(name, "category name")
        items = [raw] if isinstance(raw, str) else raw
        if not isinstance(items, list):
            raise IngestError(
                f"category {name} must be a string or a list of strings, "
                f"not {json_type(raw)}")
        values: list[str] = []
        for item in items:
            if not isinstance(item, str):
                raise IngestError(
                    f"category {name} has a value that is {json_type(item)}, "
                    "not a string")
            if not item.strip():
                raise IngestError(f"category {name} has a blank value")
            _check_key(item, f"category {name} value")
            item = id_form(item)
            if item not in values:
                values.append(item)
        if values:
            result[name] = tuple(values)
    return result


def text_list(obj: dict[str, Any], key: str) -> list[str] | None:
    """The non-blank strings under ``key`` (a bare string is one), stripped and NFC; None
    when absent. A blank entry is an error: it would shift the numbering."""
    value = obj.get(key)
    if value is None:
        return None
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list):
        raise IngestError(f"{key} must be a list of strings, not {json_type(value)}")
    for i, item in enumerate(items, 1):
        if not isinstance(item, str):
            raise IngestError(f"{key}[{i}] must be a string, not {json_type(item)}")
        if not item.strip():
            raise IngestError(f"{key}[{i}] is blank")
        _check_text(item, f"{key}[{i}]")
    return [_nfc(item.strip()) for item in items]


def explicit_paragraphs(
    value: Any, chapter_texts: list[str] | None,
) -> list[list[str]] | None:
    """The explicit paragraphs, one list per chapter (as many as ``chapter_texts`` when
    given), stripped and NFC; None when absent."""
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(g, list) for g in value):
        raise IngestError(
            "paragraphs must be a list with one list of strings per chapter")
    if chapter_texts is not None and len(value) != len(chapter_texts):
        raise IngestError(
            f"paragraphs has {len(value)} lists but there are {len(chapter_texts)} "
            "chapters; give one list per chapter")
    groups: list[list[str]] = []
    for c, group in enumerate(value, 1):
        texts: list[str] = []
        for p, item in enumerate(group, 1):
            if not isinstance(item, str):
                raise IngestError(
                    f"paragraphs[{c}][{p}] must be a string, not {json_type(item)}")
            if not item.strip():
                raise IngestError(f"paragraphs[{c}][{p}] is blank")
            _check_text(item, f"paragraphs[{c}][{p}]")
            texts.append(_nfc(item.strip()))
        if chapter_texts is None and not texts:
            raise IngestError(f"paragraphs[{c}] is empty and there is no chapter text")
        groups.append(texts)
    return groups


def supplied_vectors(
    value: Any, by_kind: Mapping[FragmentKind, list[SourceFragment]],
) -> dict[str, tuple[float, ...]]:
    """Fragment id -> supplied vector, keyed by fragment id or by kind (one entry or null
    per fragment of ``by_kind``, in order)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise IngestError(f"embeddings must be an object, not {json_type(value)}")
    known = {f.fragmentid for group in by_kind.values() for f in group}
    vectors: dict[str, tuple[float, ...]] = {}
    for key, raw in value.items():
        if key in _KIND_KEYS:
            group = by_kind[_KIND_KEYS[key]]
            if not isinstance(raw, list):
                raise IngestError(f"embeddings.{key} must be a list of vectors")
            if len(raw) != len(group):
                raise IngestError(
                    f"embeddings.{key} has {len(raw)} entries for {len(group)} {key}")
            for fragment, vector in zip(group, raw, strict=True):
                if vector is not None:
                    vectors[fragment.fragmentid] = supplied_vector(fragment.fragmentid, vector)
        elif key in known:
            vectors[key] = supplied_vector(key, raw)
        else:
            raise IngestError(
                f"embeddings key {key!r} is not a chapter, paragraph, summary or question "
                "id of this document (nor chapters/paragraphs/summaries/questions)")
    return vectors


def supplied_vector(fragmentid: str, raw: Any) -> tuple[float, ...]:
    """One supplied vector: a non-empty list of finite numbers that passes
    ``vector_problem`` (its dimension is checked at ingest, against the settings)."""
    if not isinstance(raw, list) or not raw:
        raise IngestError(f"embedding of {fragmentid} must be a non-empty list of numbers")
    vector: list[float] = []
    for i, x in enumerate(raw):
        try:
            value = float(x) if _is_number(x) else math.nan
        except OverflowError:
            raise IngestError(f"embedding of {fragmentid} holds a number too large for a "
                           f"float at position {i + 1}") from None
        if not math.isfinite(value):
            raise IngestError(
                f"embedding of {fragmentid} holds {_shown(x)}, not a finite number")
        vector.append(value)
    problem = vector_problem(vector)
    if problem is not None:
        raise IngestError(f"embedding of {fragmentid} {problem}")
    return tuple(vector)


def _is_number(value: Any) -> bool:
    """Whether a decoded JSON value is a number (a boolean is not)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _nfc(text: str) -> str:
    """Text in Unicode normal form C, the one form text and category values are stored in."""
    return unicodedata.normalize("NFC", text)


def _check_text(value: str, what: str) -> None:
    """Reject text that cannot be sent to Neo4j: a lone surrogate is not encodable as UTF-8."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise IngestError(f"{what} holds a lone surrogate (U+{ord(value[exc.start]):04X} at "
                       f"character {exc.start + 1}), which is not valid Unicode text") from None


def _check_key(value: str, what: str) -> None:
    """Reject an indexed key Neo4j could not store: invalid text, or over ``MAX_KEY_BYTES``."""
    _check_text(value, what)
    size = len(value.encode("utf-8"))
    if size > MAX_KEY_BYTES:
        raise IngestError(f"{what} is {size} bytes long; documentids, ontologies and category "
                       f"names and values are limited to MAX_KEY_BYTES = {MAX_KEY_BYTES} "
                       "UTF-8 bytes (Neo4j cannot index longer keys)")


def _shown(value: Any, width: int = 40) -> str:
    """A short printable form of a bad JSON value for an error message."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        text = json_type(value)
    return text if len(text) <= width else text[:width] + "..."


_JSON_TYPES: tuple[tuple[type | Any, str], ...] = (
    (type(None), "null"), (bool, "a boolean"), (int | float, "a number"), (str, "a string"),
    (list, "a list"), (dict, "an object"))
"""What an error message calls a decoded JSON value, by Python type (bool before int)."""


def json_type(value: Any) -> str:
    """What an error message calls a decoded JSON value: ``a string``, ``null``..."""
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)),
                type(value).__name__)

