"""Keys named like a misspelt ingest field: what the ingest tells about them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from thalabus_graph.errors import IngestError
from thalabus_graph.ingest.fields import field_like, field_notices
from thalabus_graph.ingest.parsing import document_from_dict

FIELDS = ["documentid", "ontology", "title", "language", "categories", "chapters",
          "paragraphs", "summaries", "questions", "keywords", "embeddings"]


@pytest.mark.parametrize(("key", "field"), [
    ("chapter", "chapters"), ("Chapters", "chapters"), ("summary", "summaries"),
    ("catgories", "categories"), ("documentId", "documentid"), ("TITLE", "title"),
    ("ontolgy", "ontology"), ("keyword", "keywords"),
])
def test_a_misspelt_field_names_the_field(key: str, field: str) -> None:
    assert field_like(key) == field


@pytest.mark.parametrize("key", ["author", "year", "source", "lang", "url", "court"])
def test_an_own_property_is_not_a_misspelling(key: str) -> None:
    assert field_like(key) is None


@given(st.sampled_from(FIELDS))
def test_a_field_is_never_its_own_misspelling(field: str) -> None:
    assert field_like(field) is None


def test_a_document_tells_each_property_named_like_a_field() -> None:
    doc = document_from_dict({"documentid": "d-1", "chapters": ["x"], "Title": "T",
                              "author": "A", "summary": "s"})
    assert field_notices(doc) == [
        "'Title' is stored as a Document property; did you mean the field 'title'?",
        "'summary' is stored as a Document property; did you mean the field 'summaries'?"]


def test_a_misspelt_documentid_or_a_reserved_name_names_the_field() -> None:
    with pytest.raises(IngestError, match=r"missing documentid \('documentID' is not it"):
        document_from_dict({"documentID": "d-1", "chapters": ["x"]})
    with pytest.raises(IngestError, match="did you mean the field 'ontology'"):
        document_from_dict({"documentid": "d-1", "chapters": ["x"], "ontologyid": "o"})
    with pytest.raises(IngestError, match="did you mean the field 'chapters'"):
        document_from_dict({"documentid": "d-1", "chapter": ["x"]})
