"""One JSON line (or decoded JSON value) of the ingest input into one :class:`SourceDocument`.

One job: decode, validate field by field (``ingest.fields``) and assemble the document with its
numbered fragments and supplied vectors, turning every failure (bad JSON, too deep a nesting, a
value the checks did not foresee) into an :class:`IngestError`, so a hostile line is a line
error and never a crash.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from thalabus_graph.errors import IngestError
from thalabus_graph.ingest import fields
from thalabus_graph.ingest.source import (
    FragmentKind,
    SourceDocument,
    SourceFragment,
    fragmentid_for,
    split_paragraphs,
)


def parse_document(line: str | bytes, line_number: int | None = None) -> SourceDocument:
    """Parse one JSON line into a document, raising :class:`IngestError` when invalid."""
    try:
        obj = json.loads(line)
    except RecursionError:
        raise IngestError("JSON nested too deeply to parse (deeper than Python's recursion "
                          f"limit of {sys.getrecursionlimit()})", line_number) from None
    except json.JSONDecodeError as exc:  # its own "line 2" would count the line's end
        where = ("at the end of the line" if exc.pos >= len(line.rstrip())
                 else f"at character {exc.pos + 1}")
        raise IngestError(f"not valid JSON: {exc.msg} {where}", line_number) from None
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


class _Builder:
    """Validates one decoded JSON object and assembles the document."""

    def __init__(self, obj: Any, line_number: int | None) -> None:
        self.obj = obj
        self.line_number = line_number
        self.documentid = ""

    def build(self) -> SourceDocument:
        obj = self.obj
        if not isinstance(obj, dict):
            raise IngestError(f"a document must be a JSON object, not {fields.json_type(obj)}")
        if "documentid" not in obj:
            like = [key for key in obj if fields.field_like(key) == "documentid"]
            if like:
                raise IngestError(f"missing documentid ({like[0]!r} is not it: the field "
                                  "is 'documentid')")
        self.documentid = fields.documentid(obj.get("documentid"))
        ontology = fields.optional_str(obj, "ontology", allow_blank=False)
        title = fields.optional_str(obj, "title", allow_blank=True)
        language = fields.optional_str(obj, "language", allow_blank=False)
        properties = fields.properties(obj)
        categories = fields.categories(obj.get("categories"))

        chapter_texts = fields.text_list(obj, "chapters")
        explicit = fields.explicit_paragraphs(obj.get("paragraphs"), chapter_texts)
        if chapter_texts is None:
            chapter_texts = ["\n\n".join(p) for p in explicit] if explicit is not None else []
        paragraph_groups = (
            explicit if explicit is not None else [split_paragraphs(t) for t in chapter_texts]
        )
        summary_texts = fields.text_list(obj, "summaries") or []
        question_texts = fields.text_list(obj, "questions") or []
        keyword_texts = fields.text_list(obj, "keywords") or []

        chapters = [self._fragment("chapter", i, t) for i, t in enumerate(chapter_texts, 1)]
        paragraphs: list[SourceFragment] = []
        for chapter, group in zip(chapters, paragraph_groups, strict=True):
            for text in group:
                paragraphs.append(self._fragment(
                    "paragraph", len(paragraphs) + 1, text, chapter.fragmentid))
        summaries = [self._fragment("summary", i, t) for i, t in enumerate(summary_texts, 1)]
        questions = [self._fragment("question", i, t) for i, t in enumerate(question_texts, 1)]
        keywords = [self._fragment("keyword", i, t) for i, t in enumerate(keyword_texts, 1)]

        vectors = fields.supplied_vectors(obj.get("embeddings"), {
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

    def _fragment(
        self, kind: FragmentKind, ordinal: int, text: str, chapter: str | None = None,
    ) -> SourceFragment:
        return SourceFragment(
            kind=kind, fragmentid=fragmentid_for(self.documentid, kind, ordinal),
            documentid=self.documentid, ordinal=ordinal, text=text,
            chapter_fragmentid=chapter,
        )


def _with_vector(
    fragment: SourceFragment, vectors: Mapping[str, tuple[float, ...]],
) -> SourceFragment:
    vector = vectors.get(fragment.fragmentid)
    return fragment if vector is None else replace(fragment, embedding=vector)


__all__ = ["document_from_dict", "parse_document"]
