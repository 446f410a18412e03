"""Full-text search finds literal text the analyzer keeps whole, and a semantic phrase of any
length never fails on Lucene's clause limit (against real full-text indexes)."""

from __future__ import annotations

import pytest

from tests.integration.sample import shared_embedder
from thalabus_graph import ThalabusGraph
from thalabus_graph.graph.database import Database
from thalabus_graph.search.executor import bag_of_words

pytestmark = pytest.mark.integration

DOCUMENTS = [
    ("lit-version", "Release 3.5 fixed the crash that 3 and 5 users saw."),
    ("lit-domain", "The project site is example.org and nothing else."),
    ("lit-mail", "Write to info@example.org for a copy of the decision."),
    ("lit-country", "She was born in the U.S.A. and moved later."),
    ("lit-ratio", "The mixing ratio a:b was one to three."),
    ("lit-decoy", "Version 3 and version 5 of example org, a b ratio, usa info."),
]


@pytest.fixture()
def graph(clean_db: Database) -> ThalabusGraph:
    g = ThalabusGraph(clean_db, embedder=shared_embedder())
    g.ingest([{"documentid": documentid, "ontology": "literals", "chapters": [text]}
              for documentid, text in DOCUMENTS], progress=False, strict=True)
    return g


@pytest.mark.parametrize(("literal", "documentid"), [
    ("3.5", "lit-version"), ("example.org", "lit-domain"), ("info@example.org", "lit-mail"),
    ("U.S.A.", "lit-country"), ("a:b", "lit-ratio"),
])
def test_text_search_finds_literal_tokens(graph: ThalabusGraph, literal: str,
                                          documentid: str) -> None:
    found = {d.documentid for d in graph.query(f"'{literal}'").documents or []}
    expected = {documentid, "lit-mail"} if literal == "example.org" else {documentid}
    assert found == expected
    exact = {d.documentid for d in graph.query(f"@'{literal}'").documents or []}
    assert exact == expected


def test_a_semantic_phrase_of_2000_distinct_words_is_answered(graph: ThalabusGraph) -> None:
    phrase = "mixing ratio " + " ".join(f"filler{i}" for i in range(2000))
    result = graph.query(f'"{phrase}"', return_documents=False)
    text_hits = {f.documentid for f in result.fragments if "text:chapters" in f.contributions}
    assert "lit-ratio" in text_hits  # the capped bag of words still ran and matched
    # Its own ranking puts the document sharing both real words first. (The fused order is
    # the fusion rule's business: 2,000 filler words make any hit's term coverage tiny.)
    bag = bag_of_words(graph.queries.executor(), phrase)
    assert [f.documentid for f in bag][:1] == ["lit-ratio"]
