"""How many documents of an ontology have a category pattern: the count that sizes a pushed
pattern's searches (``category_vocabulary``), taken from the cheapest side and exact on each.

Within an ontology the statement walks the ontology's documents when they are no more than
the values' documents, walks the documents outside the ontology (one value, every document
in one ontology) when those are fewer, and the values' documents otherwise. A graph built
so that each way runs and the documents outside the ontology share its values, so a way
that ignored them would miscount.
"""

from __future__ import annotations

from typing import Any

from tests.adversarial.conftest import HashEmbedder
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.graph.database import Database
from thalabus_graph.plan.steps import CategoryPattern
from thalabus_graph.query import Category
from thalabus_graph.search.vocabulary import check_query

# (ontology, KIND values) per document: "big" holds most documents, "small" a few, and both
# have "common" and "shared"; "rare" is in "big" only.
CORPUS = ([("big", ["common"])] * 6 + [("big", ["common", "shared"])] * 2
          + [("big", ["rare"])] + [("big", [])] * 3
          + [("small", ["common"]), ("small", ["shared"]), ("small", ["common", "shared"])])
VALUES = (("common",), ("shared",), ("rare",), ("common", "shared"), ("common", "rare"))


def _documents(corpus: list[tuple[str | None, list[str]]], start: int = 0
               ) -> list[dict[str, Any]]:
    out = []
    for i, (ontology, kinds) in enumerate(corpus, start):
        doc: dict[str, Any] = {"documentid": f"d{i}", "title": f"d{i}",
                               "chapters": [f"chapter of d{i}"],
                               "categories": {"KIND": kinds} if kinds else {}}
        if ontology is not None:
            doc["ontology"] = ontology
        out.append(doc)
    return out


def _way(corpus: list[tuple[str | None, list[str]]], ontology: str,
         values: tuple[str, ...]) -> str:
    """The statement's rule, restated on the corpus."""
    scope = sum(o == ontology for o, _ in corpus)
    degree = sum(v in kinds for _, kinds in corpus for v in values)
    owned = all(o is not None for o, _ in corpus)
    if scope <= degree:
        return "inside"
    if owned and len(values) == 1 and len(corpus) - scope < degree:
        return "outside"
    return "walk"


def _check(graph: ThalabusGraph, corpus: list[tuple[str | None, list[str]]]) -> set[str]:
    ways = set()
    for ontology in ("big", "small"):
        for values in VALUES:
            pattern = CategoryPattern("KIND", values)
            _, reads = check_query(graph.db, Category("KIND", values), ontology,
                                   patterns=[pattern])
            expected = sum(o == ontology and any(v in kinds for v in values)
                           for o, kinds in corpus)
            assert reads.counts[pattern] == expected, (ontology, values)
            ways.add(_way(corpus, ontology, values))
    return ways


def test_a_scoped_pattern_is_counted_exactly_from_each_side(clean_db: Database) -> None:
    graph = ThalabusGraph(clean_db, settings=Settings.from_env(), embedder=HashEmbedder(384))
    report = graph.ingest(_documents(CORPUS), progress=False)
    assert not report.errors, report.errors
    assert _check(graph, CORPUS) == {"inside", "outside", "walk"}
    # A document in no ontology: the documents outside "big" can no longer be walked from
    # the other ontologies, so no count may be taken from that side.
    unowned = [(None, ["common", "shared"])]
    report = graph.ingest(_documents(unowned, start=len(CORPUS)), progress=False)
    assert not report.errors, report.errors
    assert "outside" not in _check(graph, CORPUS + unowned)
