"""Parse and validate the JSON Lines ingestion input, one document per line, streaming.

``iter_documents(source)`` reads a file (or any iterable of lines) lazily and yields, per
non-blank line, either a :class:`SourceDocument` or a :class:`LineError` with its line number.

Input format (one JSON object per line; only ``documentid`` is required)::

    {"documentid": "docid-3894",            non-empty string, no whitespace (see below)
     "ontology": "asylum",                  optional string
     "title": "...", "language": "de",      optional strings
     "court": "BVGer", "year": 2021,        any other key with a scalar value (string, number,
                                            boolean; null is dropped) is an extra property,
                                            but for ENGINE_PROPERTIES (see below)
     "categories": {"COUNTRY_OF_ORIGIN": ["IQ"], "DECISION": "granted"},
                                            name -> string or list of strings
     "chapters": ["text of chapter 1", "..."],
     "paragraphs": [["ch1 para 1", "ch1 para 2"], ["ch2 para 1"]],     optional, see below
     "summaries": ["..."], "keywords": ["..."], "questions": ["..."],
     "embeddings": {"docid-3894-c1": [0.1, ...], "docid-3894-p2": [...]}}   optional

Decisions:

- Fragment ids are ``f"{documentid}-{letter}{n}"`` with ``c`` chapter, ``p`` paragraph,
  ``s`` summary, ``q`` question, ``k`` keyword, numbered from 1. The document id of a
  fragment id is everything before its last hyphen, so a documentid may contain hyphens. It
  may not contain whitespace or control characters, and may not itself end like a fragment
  id (``-c1``, ``-q12``...): a category stub uses the documentid as its fragment id.
- Paragraphs are numbered through the whole document (p1..pN). Unless given, they are derived
  by splitting each chapter on blank lines (whitespace-only lines count as blank); each
  paragraph is stripped. Explicit ``paragraphs`` are a list with one list of strings per
  chapter (same length as ``chapters``); when ``chapters`` is absent, each chapter's text is
  its paragraphs joined by a blank line.
- ``chapters``, ``summaries``, ``questions`` and ``keywords`` are lists of non-blank strings
  (a bare string is a one-element list); a blank entry is an error: it would shift numbering.
- A document with no text at all (only categories, or nothing) is valid.
- ``embeddings`` are precomputed vectors keyed by fragment id of a chapter, paragraph, summary
  or question of this document (keywords are not embedded). Alternatively keyed by kind:
  ``{"chapters": [[...], null, ...], "paragraphs": [...], "summaries": [...], "questions":
  [...]}`` with one entry (or null) per fragment in order. Vectors must be non-empty lists
  of numbers that pass ``vectors.vector_problem`` (finite as float32, norm in [1e-6, 1e18]);
  their dimension is checked at ingest, against the settings.
- Text (chapters, paragraphs, summaries, questions, keywords, title) and category values are
  stored in Unicode NFC, the form queries are normalised to (docs/architecture.md, "Unicode").
- Category names match ``[A-Za-z_][A-Za-z0-9_]*``; values are non-blank strings, kept
  verbatim but for NFC (``art$16``, ``x}y`` are plain data), de-duplicated in order; an
  empty list is the same as no such category.
- A documentid repeated within one file is not an error: both lines are yielded in order and
  the later line wins whole (text and vectors); the ingest report lists the repeated lines.
- Hostile values are line errors, never crashes: text with a lone surrogate (``"\\ud800"``,
  not encodable as UTF-8), an integer property outside the signed 64-bit range Neo4j stores,
  an embedding number too large for a float, JSON nested deeper than Python's recursion limit.
- Indexed keys are limited up front to ``MAX_KEY_BYTES`` UTF-8 bytes each: the documentid,
  the ontology, category names and values. Neo4j's range indexes refuse a key over about 8 KB
  ("Property value is too large to index": 8,160 bytes for one string on 5.26, measured), and
  a category key holds ontology, name and value together, so each part gets a quarter.
- Extra properties are stored on the Document node beside the engine's own, so a name the
  engine itself writes or reads on Document and fragment nodes (``ENGINE_PROPERTIES``:
  ``fragmentid``, ``text``, ``embedding``, ``ordinal``, ``ontologyid`` ...) is a line error: a
  document carrying ``fragmentid`` would read as that fragment wherever a dataset member's id
  is ``coalesce(fragmentid, documentid)``.
- A line is read at most ``max_line_bytes`` + 1 bytes at a time (``line_limit``: 8 x
  ``max_passage_chars`` by default, room for a longest fragment JSON-escaped at 6 bytes a
  character beside its paragraphs and vectors): a longer line is a line error, and reading
  goes on after its next newline, a chunk at a time, so no line is ever held whole.
- Blank lines are skipped but still counted; a UTF-8 BOM at the start is ignored.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import stat
import sys
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import IO, Any, Literal, TypeAlias

from thalabus_graph.errors import IngestError
from thalabus_graph.query.ast import NAME_PATTERN, id_form
from thalabus_graph.vectors import vector_problem

FragmentKind: TypeAlias = Literal["chapter", "paragraph", "summary", "question", "keyword"]
Scalar: TypeAlias = str | int | float | bool

KIND_LETTERS: Mapping[FragmentKind, str] = {
    "chapter": "c", "paragraph": "p", "summary": "s", "question": "q", "keyword": "k",
}
EMBEDDED_KINDS: tuple[FragmentKind, ...] = ("chapter", "paragraph", "summary", "question")
"""Fragment kinds that carry an embedding (keywords are searched as text only)."""

logger = logging.getLogger(__name__)

LINE_BYTES_PER_PASSAGE_CHAR = 8
"""``line_limit``: bytes of an input line allowed per character of ``max_passage_chars``."""
SKIP_CHUNK_BYTES = 1 << 20
"""How much of an over-long line is read at a time while skipping to its end."""
MAX_KEY_BYTES = 2048
"""Longest documentid, ontology, category name or category value, in UTF-8 bytes."""
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
"""Range of the integers Neo4j stores (the driver cannot pack larger ones)."""

_FRAGMENT_SUFFIX_RE = re.compile(r"-[cpsqk][0-9]+\Z")
_BAD_ID_CHARS_RE = re.compile(r"[\s\x00-\x1f\x7f]")
_BLANK_LINE_RE = re.compile(r"\n[ \t\f\v]*\n")
_RESERVED = frozenset({
    "documentid", "ontology", "title", "language", "categories", "chapters", "paragraphs",
    "summaries", "questions", "keywords", "embeddings",
})
ENGINE_PROPERTIES = frozenset({
    "fragmentid", "text", "embedding", "embedding_hash", "ordinal", "ontologyid",
    "ingest_lock",
})
"""Node properties the engine writes or reads on Document and fragment nodes besides the
input's own keys (``cypher/ingest_*.cypher``, the searches, dataset members): an input
document may not use them as extra properties."""
_KIND_KEYS: Mapping[str, FragmentKind] = {
    "chapters": "chapter", "paragraphs": "paragraph", "summaries": "summary",
    "questions": "question",
}


def fragmentid_for(documentid: str, kind: FragmentKind, ordinal: int) -> str:
    """The fragment id of the ``ordinal``-th (1-based) fragment of a kind: ``doc-1-c2``."""
    return f"{documentid}-{KIND_LETTERS[kind]}{ordinal}"


def split_paragraphs(text: str) -> list[str]:
    """Split a chapter into paragraphs on blank lines; each stripped, empty ones dropped."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return [p.strip() for p in _BLANK_LINE_RE.split(text) if p.strip()]


@dataclass(frozen=True)
class SourceFragment:
    """One text fragment of an input document.

    Attributes:
        kind: chapter, paragraph, summary, question or keyword.
        fragmentid: ``{documentid}-{c|p|s|q|k}{ordinal}``.
        documentid: the owning document.
        ordinal: 1-based; paragraphs count through the whole document.
        text: the fragment text.
        chapter_fragmentid: for paragraphs, the chapter they belong to.
        embedding: a precomputed vector when the input gave one.
    """

    kind: FragmentKind
    fragmentid: str
    documentid: str
    ordinal: int
    text: str
    chapter_fragmentid: str | None = None
    embedding: tuple[float, ...] | None = None


@dataclass(frozen=True)
class SourceDocument:
    r"""A validated input document.

    Example:
        >>> doc = document_from_dict({"documentid": "d-1", "chapters": ["a\n\nb", "c"]})
        >>> [p.fragmentid for p in doc.paragraphs]
        ['d-1-p1', 'd-1-p2', 'd-1-p3']
    """

    documentid: str
    ontology: str | None = None
    title: str | None = None
    language: str | None = None
    properties: Mapping[str, Scalar] = field(default_factory=dict)
    categories: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    chapters: tuple[SourceFragment, ...] = ()
    paragraphs: tuple[SourceFragment, ...] = ()
    summaries: tuple[SourceFragment, ...] = ()
    questions: tuple[SourceFragment, ...] = ()
    keywords: tuple[SourceFragment, ...] = ()
    line_number: int | None = None

    def fragments(self) -> Iterator[SourceFragment]:
        """All fragments: chapters, paragraphs, summaries, questions, keywords, in that order."""
        yield from self.embeddable()
        yield from self.keywords

    def embeddable(self) -> Iterator[SourceFragment]:
        """The fragments that carry an embedding (chapters, paragraphs, summaries, questions)."""
        yield from self.chapters
        yield from self.paragraphs
        yield from self.summaries
        yield from self.questions

    @property
    def has_text(self) -> bool:
        """True when the document has at least one fragment."""
        return bool(self.chapters or self.summaries or self.questions or self.keywords)


@dataclass(frozen=True)
class LineError:
    """A line that failed validation; ``line_number`` is 1-based."""

    line_number: int
    message: str

    def to_exception(self) -> IngestError:
        """The same failure as an :class:`IngestError` (to raise)."""
        return IngestError(self.message, self.line_number)


ParsedLine: TypeAlias = SourceDocument | LineError


def line_limit(max_passage_chars: int) -> int:
    """The longest input line read, in bytes, for a ``max_passage_chars`` setting.

    Example:
        >>> line_limit(16_000_000)
        128000000
    """
    return LINE_BYTES_PER_PASSAGE_CHAR * max_passage_chars


def iter_documents(
    source: str | os.PathLike[str] | Iterable[str | bytes],
    *,
    max_line_bytes: int | None = None,
) -> Iterator[ParsedLine]:
    """Yield a :class:`SourceDocument` or :class:`LineError` per non-blank line, lazily.

    Args:
        source: a path to a ``.jsonl`` file, or any iterable of lines (str or bytes),
            such as an open file. Nothing is read before the iterator is advanced.
        max_line_bytes: a longer line is a :class:`LineError`; a file is never read more
            than this + 1 bytes of a line at a time. None: ``line_limit`` of the default
            ``max_passage_chars``.
    """
    limit = max_line_bytes if max_line_bytes is not None else _default_line_limit()
    if isinstance(source, str | os.PathLike):
        yield from _iter_path(source, limit)
        return
    for number, line in enumerate(source, start=1):
        parsed = (_over_long(number, limit) if _line_bytes_over(line, limit)
                  else _parse_line(line, number))
        if parsed is not None:
            yield parsed


def read_documents(
    source: str | os.PathLike[str] | Iterable[str | bytes],
    *,
    skip_errors: bool = False,
    errors: list[LineError] | None = None,
) -> Iterator[SourceDocument]:
    """Yield the valid documents; a bad line raises :class:`IngestError`, or is skipped.

    Args:
        source: as for :func:`iter_documents`.
        skip_errors: skip bad lines instead of raising at the first one.
        errors: when given, skipped lines are appended to it.
    """
    for parsed in iter_documents(source):
        if isinstance(parsed, LineError):
            if not skip_errors:
                raise parsed.to_exception()
            if errors is not None:
                errors.append(parsed)
            continue
        yield parsed


def parse_document(line: str | bytes, line_number: int | None = None) -> SourceDocument:
    """Parse one JSON line into a document, raising :class:`IngestError` when invalid."""
    try:
        obj = json.loads(line)
    except RecursionError:
        raise IngestError("JSON nested too deeply to parse (deeper than Python's recursion "
                          f"limit of {sys.getrecursionlimit()})", line_number) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise IngestError(f"not valid JSON: {exc}", line_number) from None
    return document_from_dict(obj, line_number)


def document_from_dict(obj: Any, line_number: int | None = None) -> SourceDocument:
    """Validate one decoded JSON value into a document, raising :class:`IngestError`."""
    try:
        return _Builder(obj, line_number).build()
    except IngestError as exc:
        if exc.line_number is not None or line_number is None:
            raise
        raise IngestError(str(exc), line_number) from None
    except RecursionError:
        raise IngestError("value nested too deeply", line_number) from None
    except (TypeError, ValueError, OverflowError) as exc:  # safety net: never crash a run
        raise IngestError(f"invalid document ({type(exc).__name__}: {exc})",
                          line_number) from None


# --- internals ------------------------------------------------------------------------------


def _default_line_limit() -> int:
    from thalabus_graph.settings import Settings

    return line_limit(Settings.max_passage_chars)


def check_source_kind(path: str | os.PathLike[str], mode: int, fd: int) -> None:
    """Refuse a device as a file of documents (``IngestError``): ``/dev/zero`` or
    ``/dev/urandom`` never ends, so an ingest of it would skip one endless over-long line
    forever. A regular file, a pipe (``<(...)``, ``/dev/stdin`` fed by a pipe) and a terminal
    are read."""
    if (stat.S_ISCHR(mode) and not os.isatty(fd)) or stat.S_ISBLK(mode) \
            or stat.S_ISSOCK(mode):
        raise IngestError(f"{os.fspath(path)} is a device, not a file of documents: give a "
                          "JSON Lines file, or pipe the lines in (ingest /dev/stdin)")


def _iter_path(path: str | os.PathLike[str], limit: int) -> Iterator[ParsedLine]:
    with open(path, "rb") as handle:
        check_source_kind(path, os.fstat(handle.fileno()).st_mode, handle.fileno())
        for number, raw in enumerate(bounded_lines(handle, limit), start=1):
            parsed = _over_long(number, limit) if raw is None else _parse_line(raw, number)
            if parsed is not None:
                yield parsed


def bounded_lines(handle: IO[bytes], limit: int) -> Iterator[bytes | None]:
    """Each line of ``handle`` (its newline kept), or None for a line of more than ``limit``
    bytes: None comes as soon as the line is known to be too long (so the caller can say so
    before a long skip), and the rest of the line is then read past in ``SKIP_CHUNK_BYTES``
    chunks up to its newline, never held; no read takes more than ``limit + 1`` bytes."""
    while line := handle.readline(limit + 1):
        if line.endswith(b"\n") or len(line) <= limit:
            yield line
            continue
        del line
        yield None
        while (rest := handle.readline(SKIP_CHUNK_BYTES)) and not rest.endswith(b"\n"):
            pass


def _line_bytes_over(line: str | bytes, limit: int) -> bool:
    """Whether a line given in memory is longer than ``limit`` bytes (newline aside)."""
    if isinstance(line, str):
        if len(line) * 4 <= limit:
            return False
        line = line.encode("utf-8", "surrogatepass")
    ending = 2 if line.endswith(b"\r\n") else 1 if line.endswith(b"\n") else 0
    return len(line) - ending > limit


def _over_long(number: int, limit: int) -> LineError:
    message = (f"the line is longer than {limit:,} bytes (8 x max_passage_chars); it is "
               "skipped without being read into memory")
    logger.warning("line %d: %s", number, message)
    return LineError(number, message)


def _parse_line(line: str | bytes, number: int) -> ParsedLine | None:
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            return LineError(number, f"not valid UTF-8: {exc}")
    if number == 1:
        line = line.removeprefix("\ufeff")
    if not line.strip():
        return None
    try:
        return parse_document(line, number)
    except IngestError as exc:
        return LineError(number, _strip_prefix(str(exc), number))


def _strip_prefix(message: str, number: int) -> str:
    return message.removeprefix(f"line {number}: ")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class _Builder:
    """Validates one decoded JSON object and assembles the document."""

    def __init__(self, obj: Any, line_number: int | None) -> None:
        self.obj = obj
        self.line_number = line_number
        self.documentid = ""

    def build(self) -> SourceDocument:
        obj = self.obj
        if not isinstance(obj, dict):
            raise IngestError(f"a document must be a JSON object, not {_json_type(obj)}")
        self.documentid = self._documentid(obj.get("documentid"))
        ontology = self._optional_str(obj, "ontology", allow_blank=False)
        title = self._optional_str(obj, "title", allow_blank=True)
        language = self._optional_str(obj, "language", allow_blank=False)
        properties = self._properties(obj)
        categories = self._categories(obj.get("categories"))

        chapter_texts = self._text_list(obj, "chapters")
        explicit = self._explicit_paragraphs(obj.get("paragraphs"), chapter_texts)
        if chapter_texts is None:
            chapter_texts = ["\n\n".join(p) for p in explicit] if explicit is not None else []
        paragraph_groups = (
            explicit if explicit is not None else [split_paragraphs(t) for t in chapter_texts]
        )
        summary_texts = self._text_list(obj, "summaries") or []
        question_texts = self._text_list(obj, "questions") or []
        keyword_texts = self._text_list(obj, "keywords") or []

        chapters = [self._fragment("chapter", i, t) for i, t in enumerate(chapter_texts, 1)]
        paragraphs: list[SourceFragment] = []
        for chapter, group in zip(chapters, paragraph_groups, strict=True):
            for text in group:
                paragraphs.append(self._fragment(
                    "paragraph", len(paragraphs) + 1, text, chapter.fragmentid))
        summaries = [self._fragment("summary", i, t) for i, t in enumerate(summary_texts, 1)]
        questions = [self._fragment("question", i, t) for i, t in enumerate(question_texts, 1)]
        keywords = [self._fragment("keyword", i, t) for i, t in enumerate(keyword_texts, 1)]

        vectors = self._embeddings(obj.get("embeddings"), {
            "chapter": chapters, "paragraph": paragraphs, "summary": summaries,
            "question": questions})
        if vectors:
            chapters, paragraphs, summaries, questions = (
                [_with_vector(f, vectors) for f in group]
                for group in (chapters, paragraphs, summaries, questions))
        return SourceDocument(
            documentid=self.documentid, ontology=ontology, title=title, language=language,
            properties=properties, categories=categories, chapters=tuple(chapters),
            paragraphs=tuple(paragraphs), summaries=tuple(summaries),
            questions=tuple(questions), keywords=tuple(keywords), line_number=self.line_number)

    def _documentid(self, value: Any) -> str:
        if value is None:
            raise IngestError("missing documentid")
        if not isinstance(value, str):
            raise IngestError(f"documentid must be a string, not {_json_type(value)}")
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

    def _optional_str(self, obj: dict[str, Any], key: str, *, allow_blank: bool) -> str | None:
        value = obj.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise IngestError(f"{key} must be a string, not {_json_type(value)}")
        if not allow_blank and not value.strip():
            raise IngestError(f"{key} is blank")
        if key == "ontology":
            _check_key(value, key)
            return id_form(value)
        _check_text(value, key)
        return _nfc(value)

    def _properties(self, obj: dict[str, Any]) -> dict[str, Scalar]:
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
                    "); rename the property")
            if isinstance(value, float) and not math.isfinite(value):
                raise IngestError(f"property {key!r} is not a finite number")
            if not isinstance(value, str | int | float | bool):
                raise IngestError(
                    f"property {key!r} must be a string, number or boolean, "
                    f"not {_json_type(value)}")
            if isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
                raise IngestError(f"property {key!r} is an integer outside the signed 64-bit "
                               "range Neo4j stores (write it as a string)")
            if isinstance(value, str):
                _check_text(value, f"property {key!r}")
            props[key] = value
        return props

    def _categories(self, value: Any) -> dict[str, tuple[str, ...]]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise IngestError(f"categories must be an object, not {_json_type(value)}")
        result: dict[str, tuple[str, ...]] = {}
        for name, raw in value.items():
            if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
                raise IngestError(f"category name {name!r} must match {NAME_PATTERN.pattern}")
            _check_key(name, "category name")
            items = [raw] if isinstance(raw, str) else raw
            if not isinstance(items, list):
                raise IngestError(
                    f"category {name} must be a string or a list of strings, "
                    f"not {_json_type(raw)}")
            values: list[str] = []
            for item in items:
                if not isinstance(item, str):
                    raise IngestError(
                        f"category {name} has a value that is {_json_type(item)}, "
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

    def _text_list(self, obj: dict[str, Any], key: str) -> list[str] | None:
        value = obj.get(key)
        if value is None:
            return None
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list):
            raise IngestError(f"{key} must be a list of strings, not {_json_type(value)}")
        for i, item in enumerate(items, 1):
            if not isinstance(item, str):
                raise IngestError(f"{key}[{i}] must be a string, not {_json_type(item)}")
            if not item.strip():
                raise IngestError(f"{key}[{i}] is blank")
            _check_text(item, f"{key}[{i}]")
        return [_nfc(item.strip()) for item in items]

    def _explicit_paragraphs(
        self, value: Any, chapter_texts: list[str] | None,
    ) -> list[list[str]] | None:
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
                        f"paragraphs[{c}][{p}] must be a string, not {_json_type(item)}")
                if not item.strip():
                    raise IngestError(f"paragraphs[{c}][{p}] is blank")
                _check_text(item, f"paragraphs[{c}][{p}]")
                texts.append(_nfc(item.strip()))
            if chapter_texts is None and not texts:
                raise IngestError(f"paragraphs[{c}] is empty and there is no chapter text")
            groups.append(texts)
        return groups

    def _fragment(
        self, kind: FragmentKind, ordinal: int, text: str, chapter: str | None = None,
    ) -> SourceFragment:
        return SourceFragment(
            kind=kind, fragmentid=fragmentid_for(self.documentid, kind, ordinal),
            documentid=self.documentid, ordinal=ordinal, text=text,
            chapter_fragmentid=chapter,
        )

    def _embeddings(
        self, value: Any, by_kind: Mapping[FragmentKind, list[SourceFragment]],
    ) -> dict[str, tuple[float, ...]]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise IngestError(f"embeddings must be an object, not {_json_type(value)}")
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
                        vectors[fragment.fragmentid] = self._vector(fragment.fragmentid, vector)
            elif key in known:
                vectors[key] = self._vector(key, raw)
            else:
                raise IngestError(
                    f"embeddings key {key!r} is not a chapter, paragraph, summary or question "
                    "id of this document (nor chapters/paragraphs/summaries/questions)")
        return vectors

    def _vector(self, fragmentid: str, raw: Any) -> tuple[float, ...]:
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


def _with_vector(
    fragment: SourceFragment, vectors: Mapping[str, tuple[float, ...]],
) -> SourceFragment:
    vector = vectors.get(fragment.fragmentid)
    return fragment if vector is None else replace(fragment, embedding=vector)


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
        text = _json_type(value)
    return text if len(text) <= width else text[:width] + "..."


_JSON_TYPES: tuple[tuple[type | Any, str], ...] = (
    (type(None), "null"), (bool, "a boolean"), (int | float, "a number"), (str, "a string"),
    (list, "a list"), (dict, "an object"))
"""What an error message calls a decoded JSON value, by Python type (bool before int)."""


def _json_type(value: Any) -> str:
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)),
                type(value).__name__)


__all__ = [
    "EMBEDDED_KINDS",
    "ENGINE_PROPERTIES",
    "INT64_MAX",
    "INT64_MIN",
    "KIND_LETTERS",
    "MAX_KEY_BYTES",
    "FragmentKind",
    "LineError",
    "ParsedLine",
    "SourceDocument",
    "SourceFragment",
    "bounded_lines",
    "document_from_dict",
    "fragmentid_for",
    "iter_documents",
    "line_limit",
    "parse_document",
    "read_documents",
    "split_paragraphs",
]
