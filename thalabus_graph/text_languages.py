"""The language a document's text is indexed in, written as its fragments' labels at ingest
and by the backfill of a graph ingested before migration V0009 (docs/architecture.md, "Text
search by language").

A document's text language is its stated ``language`` when that has an analyzer
(``languages.language_of``), none when it states another language (its text stays
language-neutral), and, when it states none, the language lingua detects in its title,
chapters and keywords among every language with an analyzer. Chapters and keywords carry the
language's label (``EnglishChapter``, ``EnglishKeyword``): the per-language full-text index
holds exactly them. The document's own properties are left as they are.

``backfill`` labels the documents V0009 marked ``TextLanguagePending``, in batches, each batch
one transaction; nodes are only labelled, so fragment ids, texts, embeddings and dataset
memberships stay. The engine searches the per-language indexes only once no document is
pending (``search.languages.TextLanguageState``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from thalabus_graph import languages
from thalabus_graph.graph.database import Database
from thalabus_graph.ingest.source import SourceDocument

BACKFILL_BATCH = 500
"""Documents labelled per transaction by ``backfill``."""

DETECTABLE = languages.EVERY
"""The candidates of a document's detected language: every language with an analyzer."""


def text_language(stated: str | None, text: str) -> str | None:
    """The language one document's text is indexed in (see the module docstring)."""
    return languages_for([(stated, text)])[0]


def languages_for(documents: Sequence[tuple[str | None, str]]) -> list[str | None]:
    """The text language of each ``(stated language, text)`` pair, detecting in one
    parallel lingua call the languages of the documents that state none."""
    out: list[str | None] = [languages.language_of(stated) for stated, _ in documents]
    unstated = [i for i, (stated, _) in enumerate(documents) if not stated]
    if unstated:
        found = languages.detect_many([documents[i][1] for i in unstated], DETECTABLE)
        for i, detection in zip(unstated, found, strict=True):
            out[i] = detection.language
    return out


def sample_text(title: str | None, texts: Iterable[str | None]) -> str:
    """The text a document's language is detected in: its title and fragments, cut at what
    the detector reads."""
    parts: list[str] = [title] if title else []
    size = len(title or "")
    for text in texts:
        if size >= languages.DETECT_CHARACTERS:
            break
        if text:
            parts.append(text)
            size += len(text) + 1
    return " ".join(parts)[:languages.DETECT_CHARACTERS]


def languages_of(batch: Sequence[SourceDocument]) -> dict[str, str | None]:
    """Document id -> the language its text is indexed in, for an ingest batch."""
    pairs = [(doc.language, sample_text(doc.title, (f.text for f in (*doc.chapters,
                                                                     *doc.keywords))))
             for doc in batch]
    return {doc.documentid: code
            for doc, code in zip(batch, languages_for(pairs), strict=True)}


def update_parameters(kind: str) -> dict[str, Any]:
    """The extra parameter of ``ingest_update_<kind>``: every language label a fragment of
    that kind may carry (removed before its own is set, so a document re-ingested in another
    language moves to that language's index)."""
    label = {"chapters": "Chapter", "keywords": "Keyword"}.get(kind)
    return {} if label is None else {"language_labels": languages.all_labels(label)}


def _label_rows(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The backfill's rows: each pending document with its chapters' and keywords' labels."""
    rows = list(rows)
    codes = languages_for([(r["language"], sample_text(r["title"], r["texts"])) for r in rows])
    return [{"documentid": r["documentid"],
             "chapter_labels": languages.labels_of(code, "Chapter"),
             "keyword_labels": languages.labels_of(code, "Keyword")}
            for r, code in zip(rows, codes, strict=True)]


def backfill(db: Database, *, batch: int = BACKFILL_BATCH) -> int:
    """Label the fragments of every document marked ``TextLanguagePending`` (a graph
    ingested before migration V0009) and remove the mark; returns how many documents.
    Each batch is one transaction, so an interrupted backfill resumes where it stopped."""
    done = 0
    while True:
        pending = db.read("text_languages_pending", limit=batch,
                          characters=languages.DETECT_CHARACTERS)
        if not pending:
            return done
        db.write("text_languages_label", rows=_label_rows(pending),
                 chapter_labels=languages.all_labels("Chapter"),
                 keyword_labels=languages.all_labels("Keyword"))
        done += len(pending)
