"""A graph context's rows put on the results a query returns (``results.context`` reads them):
on each document when the query returns documents, else on each fragment (a category stub's
context sees its document only)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from thalabus_graph.fragments import Fragment
from thalabus_graph.graph.database import Database
from thalabus_graph.results.context import GraphContext
from thalabus_graph.results.documents import DocumentHit


def documents_with_context(db: Database, context: GraphContext,
                           documents: Sequence[DocumentHit]) -> list[DocumentHit]:
    """``documents``, each with its context rows (one statement for all)."""
    rows = context.rows(db, [(d.documentid, None) for d in documents])
    return [replace(d, context=found) for d, found in zip(documents, rows, strict=True)]


def fragments_with_context(db: Database, context: GraphContext,
                           fragments: Sequence[Fragment]) -> list[Fragment]:
    """``fragments``, each with its context rows (one statement for all)."""
    rows = context.rows(db, [(f.documentid, None if f.is_stub else f.fragmentid)
                             for f in fragments])
    return [f.with_context(found) for f, found in zip(fragments, rows, strict=True)]
