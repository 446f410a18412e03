"""neomodel classes mirroring the graph model: the way to inspect datasets from Python.

The engine writes with named Cypher (``cypher/dataset_*.cypher``); these classes read what it
wrote, every property of it: a ``Dataset`` node with its rerank flags (``reranked``,
``reason``, ``failures``, ``weight_scale`` ...) and its members through ``Aggregates``
(``weight``, ``hidden``, ``original_score``, ``unscored``). ``bind(driver)`` points neomodel at
a driver. Write through the engine (``graph.datasets``, ``rerank_dataset``), not through
these classes: the engine keeps a dataset's members, counts and flags consistent.

``FragmentNode``, ``DocumentNode`` and ``CategoryNode`` carry a ``Node`` suffix so they do not
clash with the engine's ``Fragment`` and friends; ``__label__`` keeps their node labels
``Fragment``, ``Document`` and ``Category``.

Example:
    >>> from thalabus_graph.graph import models
    >>> models.bind(graph.db.driver, graph.db.database)                # doctest: +SKIP
    >>> ds = models.Dataset.nodes.get(datasetid="demo#rerank_1")       # doctest: +SKIP
    >>> ds.reranked, ds.reason, ds.weight_scale, ds.failures           # doctest: +SKIP
    (True, None, 'reranker', 0)
    >>> [(m.fragmentid, rel.weight, rel.original_score, rel.unscored)  # doctest: +SKIP
    ...  for m in ds.fragments for rel in [ds.fragments.relationship(m)]]
    >>> ds.weighted_members()[:2]                                      # doctest: +SKIP
    [('docid-1001-c1', 0.93, False), ('docid-1003-p2', 0.71, False)]
"""

from __future__ import annotations

from typing import Any

from neo4j import Driver
from neomodel import (
    BooleanProperty,
    DateTimeNeo4jFormatProperty,
    FloatProperty,
    IntegerProperty,
    RelationshipTo,
    StringProperty,
    StructuredNode,
    StructuredRel,
    db,
    get_config,
)

from thalabus_graph.languages import all_labels


def bind(driver: Driver, database: str = "neo4j") -> None:
    """Make neomodel use this driver (and database) for the model classes below."""
    get_config().database_name = database
    db.set_connection(driver=driver)


class Aggregates(StructuredRel):
    """Dataset membership (``cypher/dataset_add_*.cypher``, ``dataset_hide.cypher``).

    ``weight``: the member's score (the reranker's on a rerank dataset); ``hidden``: left out
    by this dataset's readers; ``original_score``: the retrieval score a rerank replaced
    (None on a query's dataset); ``unscored``: a partly failed rerank could not score it, so
    ``weight`` is its retrieval score (None or False otherwise).
    """

    weight = FloatProperty()
    hidden = BooleanProperty(default=False)
    original_score = FloatProperty()
    unscored = BooleanProperty()


class UsesDataset(StructuredRel):
    """A goal's use of a dataset, in ``ordinal`` order."""

    ordinal = IntegerProperty()


class Ontology(StructuredNode):
    """A family of documents."""

    ontologyid = StringProperty(unique_index=True, required=True)


class CategoryNode(StructuredNode):
    """One category value of one ontology ('' when the document has none): ``:Category``."""

    __label__ = "Category"

    ontologyid = StringProperty()
    name = StringProperty()
    value = StringProperty()


class DocumentNode(StructuredNode):
    """A document; its fragments point at it: ``:Document``."""

    __label__ = "Document"

    documentid = StringProperty(unique_index=True, required=True)
    title = StringProperty()
    language = StringProperty()
    ontology = RelationshipTo(Ontology, "IN_ONTOLOGY")
    categories = RelationshipTo(CategoryNode, "HAS_CATEGORY")


class FragmentNode(StructuredNode):
    """Any retrievable piece of a document: ``:Fragment`` (every fragment node carries it)."""

    __label__ = "Fragment"

    fragmentid = StringProperty(unique_index=True, required=True)
    documentid = StringProperty(index=True)
    ordinal = IntegerProperty()
    text = StringProperty()


class Chapter(FragmentNode):
    """A chapter (``docid-N-cK``)."""

    document = RelationshipTo(DocumentNode, "IN_DOCUMENT")


class Paragraph(FragmentNode):
    """A paragraph (``docid-N-pK``, numbered through the document)."""

    chapter = RelationshipTo(Chapter, "IN_CHAPTER")


class Summary(FragmentNode):
    """A summary (``docid-N-sK``)."""

    document = RelationshipTo(DocumentNode, "IN_DOCUMENT")


class Question(FragmentNode):
    """A question the document answers (``docid-N-qK``)."""

    document = RelationshipTo(DocumentNode, "IN_DOCUMENT")


class Keyword(FragmentNode):
    """A keyword (``docid-N-kK``), searched as text only."""

    document = RelationshipTo(DocumentNode, "IN_DOCUMENT")


def _language_classes(base: type[FragmentNode], kind: str) -> dict[str, type[FragmentNode]]:
    """A subclass of ``base`` for each language label its fragments can carry (``FrenchChapter``:
    the label that puts a chapter in its language's full-text index), so neomodel resolves a
    labelled fragment to its kind instead of refusing its set of labels."""
    meta: Any = type(base)  # neomodel's NodeMeta registers each class by its labels
    return {label: meta(label, (base,), {"__label__": label, "__module__": __name__,
                                          "__doc__": f"A {kind.lower()} with ``:{label}``."})
            for label in all_labels(kind)}


LANGUAGE_CHAPTERS = _language_classes(Chapter, "Chapter")
"""Chapter classes by language label (``FrenchChapter``: a ``Chapter``)."""
LANGUAGE_KEYWORDS = _language_classes(Keyword, "Keyword")
"""Keyword classes by language label (``GermanKeyword``: a ``Keyword``)."""


class PendingDocument(DocumentNode):
    """A document ingested before the per-language full-text indexes, waiting for
    ``migrate`` to label its text (``:TextLanguagePending``)."""

    __label__ = "TextLanguagePending"


class Dataset(StructuredNode):
    """A stored result set; members are fragments, or Documents for category stubs.

    Written by ``cypher/dataset_create.cypher`` (``datasetid`` ``{session}#{kind}_{number}``,
    ``name``, ``kind``, ``query``, ``session``, ``number``, ``created_at``) and
    ``dataset_flag.cypher`` (``size``: members written; ``weight_scale``: ``retrieval``,
    ``reranker`` or ``mixed``). A dataset a rerank wrote (or a query with
    ``automatically_rerank``) also says how its weights came about: ``reranked``, ``reason``
    (None when complete), ``failures`` (failed batches), ``unscored`` (members left with
    their retrieval weight), and for ``rerank_dataset`` ``capped`` (members the output cap
    removed), ``source_query`` (the query the parent answered) and ``clauses`` (``joined``,
    ``geometric`` or ``minimum``). A flag no writer set reads None.
    """

    datasetid = StringProperty(unique_index=True, required=True)
    name = StringProperty()
    kind = StringProperty()
    query = StringProperty()
    session = StringProperty(index=True)
    number = IntegerProperty()
    size = IntegerProperty()
    created_at = DateTimeNeo4jFormatProperty()
    weight_scale = StringProperty()
    reranked = BooleanProperty()
    reason = StringProperty()
    failures = IntegerProperty()
    unscored = IntegerProperty()
    capped = IntegerProperty()
    source_query = StringProperty()
    clauses = StringProperty()
    fragments = RelationshipTo(FragmentNode, "AGGREGATES", model=Aggregates)
    documents = RelationshipTo(DocumentNode, "AGGREGATES", model=Aggregates)
    derived_from = RelationshipTo("Dataset", "DERIVED_FROM")

    def weighted_members(self) -> list[tuple[str, float, bool]]:
        """(member id, weight, hidden) of every member, best first, ties by id."""
        out: list[tuple[str, float, bool]] = []
        managers: tuple[tuple[Any, str], ...] = ((self.fragments, "fragmentid"),
                                                 (self.documents, "documentid"))
        for rel_manager, key in managers:
            for node in rel_manager.all():
                rel: Any = rel_manager.relationship(node)
                out.append((getattr(node, key), float(rel.weight), bool(rel.hidden)))
        return sorted(out, key=lambda m: (-m[1], m[0]))


class Goal(StructuredNode):
    """A goal whose context is built from its datasets, its own RAG fragments (a category stub
    points at its Document) and its loaded documents (``thalabus_graph.goals``)."""

    goalid = StringProperty(unique_index=True, required=True)
    datasets = RelationshipTo(Dataset, "USES_DATASET", model=UsesDataset)
    rag_fragments = RelationshipTo(FragmentNode, "USES_FRAGMENT")
    rag_documents = RelationshipTo(DocumentNode, "USES_FRAGMENT")
    loaded_documents = RelationshipTo(DocumentNode, "LOADS_DOCUMENT")


__all__ = [
    "Aggregates",
    "CategoryNode",
    "Chapter",
    "Dataset",
    "DocumentNode",
    "FragmentNode",
    "Goal",
    "Keyword",
    "Ontology",
    "Paragraph",
    "Question",
    "Summary",
    "UsesDataset",
    "bind",
]
