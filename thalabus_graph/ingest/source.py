"""The ingest input: the documents and fragments a JSON Lines line becomes, and its format.

One job: the values every other ingest module passes around (``SourceDocument``,
``SourceFragment``, ``LineError``) and the id rules they follow, kept apart from the parsing
(``ingest.parsing``, ``ingest.fields``) and the line reading (``ingest.lines``) so the format
is stated once, beside the values it produces. ``iter_documents(source)`` (``ingest.lines``)
reads a file (or any iterable of lines) lazily and yields, per non-blank line, either a
:class:`SourceDocument` or a :class:`LineError` with its line number.

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
  is ``coalesce(fragmentid, documentid)``. A key named like a misspelt field (``chapter``,
  ``Title``) is stored too, and the run's report warns of it (``fields.field_like``).
- The Document's properties from the input (title, language, ontology, extra properties) are
  the input's: a re-ingest sets those its line gives and removes those the previous line gave
  and this one does not (``INGEST_PROPERTIES`` records their names). Any other property is the
  application's and stays, as do the application's labels and relationships on the Document
  and on every fragment that still exists.
- A line is read at most ``max_line_bytes`` + 1 bytes at a time (``line_limit``: 8 x
  ``max_passage_chars`` by default, room for a longest fragment JSON-escaped at 6 bytes a
  character beside its paragraphs and vectors): a longer line is a line error, and reading
  goes on after its next newline, a chunk at a time, so no line is ever held whole.
- Blank lines are skipped but still counted; a UTF-8 BOM at the start is ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from thalabus_graph.errors import IngestError
from thalabus_graph.graph.properties import ENGINE_PROPERTIES, INGEST_PROPERTIES

FragmentKind: TypeAlias = Literal["chapter", "paragraph", "summary", "question", "keyword"]
Scalar: TypeAlias = str | int | float | bool

KIND_LETTERS: Mapping[FragmentKind, str] = {
    "chapter": "c", "paragraph": "p", "summary": "s", "question": "q", "keyword": "k",
}
EMBEDDED_KINDS: tuple[FragmentKind, ...] = ("chapter", "paragraph", "summary", "question")
"""Fragment kinds that carry an embedding (keywords are searched as text only)."""

MAX_KEY_BYTES = 2048
"""Longest documentid, ontology, category name or category value, in UTF-8 bytes."""
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
"""Range of the integers Neo4j stores (the driver cannot pack larger ones)."""

_BLANK_LINE_RE = re.compile(r"\n[ \t\f\v]*\n")

DOCUMENT_FIELDS: tuple[str, ...] = ("title", "language", "ontology")
"""The input's named document fields stored as Document properties; always the input's, so a
re-ingest that no longer gives one removes it, recorded in ``INGEST_PROPERTIES`` or not."""

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
        >>> from thalabus_graph.ingest.parsing import document_from_dict
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


__all__ = [
    "DOCUMENT_FIELDS",
    "EMBEDDED_KINDS",
    "ENGINE_PROPERTIES",
    "INGEST_PROPERTIES",
    "INT64_MAX",
    "INT64_MIN",
    "KIND_LETTERS",
    "MAX_KEY_BYTES",
    "FragmentKind",
    "LineError",
    "ParsedLine",
    "Scalar",
    "SourceDocument",
    "SourceFragment",
    "fragmentid_for",
    "split_paragraphs",
]
