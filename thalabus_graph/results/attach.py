"""What a query shows of its raw fragments: its documents (``results.documents``) when it
returns documents, then a graph context's rows (``results.context`` reads them) on each
document, else on each fragment the cut keeps (a category stub's context sees its document
only)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from thalabus_graph.fragments import Fragment
from thalabus_graph.graph.database import Database
from thalabus_graph.results.context import GraphContext
from thalabus_graph.results.documents import DocumentHit, documents_of


def with_context(db: Database, context: GraphContext, fragments: list[Fragment],
                 documents: list[DocumentHit] | None, limit: int | None = None
                 ) -> tuple[list[Fragment], list[DocumentHit] | None]:
    """A query's results with the context's rows, read in one statement: on its documents
    when it returns them, else on the fragments the cut to ``limit`` keeps (None: every
    one)."""
    kept = fragments if documents is not None or limit is None else fragments[:limit]
    targets = ([(d.documentid, None) for d in documents] if documents is not None
               else [(f.documentid, None if f.is_stub else f.fragmentid) for f in kept])
    rows = context.rows(db, targets)
    if documents is not None:
        return fragments, [replace(d, context=found)
                           for d, found in zip(documents, rows, strict=True)]
    return [replace(f, context=found)
            for f, found in zip(kept, rows, strict=True)] + fragments[len(kept):], None


def shown(db: Database, fragments: list[Fragment], *, documents: bool,
          context: GraphContext | None, known: Mapping[str, Sequence[Any]] | None = None,
          limit: int | None = None) -> tuple[list[Fragment], list[DocumentHit] | None]:
    """The results a query shows of its raw ``fragments``: aggregated to documents when
    ``documents`` is set (the best ``limit``, ``known``: details the searches already read),
    then with the ``context``'s rows when one is asked; fragments stay uncut."""
    hits = documents_of(db, fragments, known=known, limit=limit) if documents else None
    if context is None:
        return fragments, hits
    return with_context(db, context, fragments, hits, limit)
