"""Tests for the JSONL ingestion input parser (thalabus_graph.ingest: source, parsing, lines)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from thalabus_graph.errors import IngestError
from thalabus_graph.fragments import document_id_of
from thalabus_graph.ingest.lines import iter_documents, read_documents
from thalabus_graph.ingest.parsing import document_from_dict, parse_document
from thalabus_graph.ingest.source import (
    LineError,
    SourceDocument,
    fragmentid_for,
    split_paragraphs,
)
from thalabus_graph.query import Category
from thalabus_graph.query.ast import id_form


def line(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False) + "\n"


def only_error(lines: list[str]) -> LineError:
    parsed = list(iter_documents(lines))
    assert len(parsed) == 1
    result = parsed[0]
    assert isinstance(result, LineError), result
    return result


# --- ids ------------------------------------------------------------------------------------


def test_fragment_ids_and_their_document() -> None:
    assert fragmentid_for("docid-3894", "chapter", 1) == "docid-3894-c1"
    assert fragmentid_for("a-b-c", "paragraph", 12) == "a-b-c-p12"
    assert document_id_of("a-b-c-p12") == "a-b-c"
    assert document_id_of("docid-3894-k3") == "docid-3894"


# --- a full document ------------------------------------------------------------------------


def test_full_document() -> None:
    doc = parse_document(line({
        "documentid": "docid-3894", "ontology": "asylum", "title": "T", "language": "de",
        "court": "VG", "year": 2021, "published": True, "note": None,
        "categories": {"COUNTRY_OF_ORIGIN": ["IQ", "SY", "IQ"], "DECISION": "granted asylum"},
        "chapters": ["one\n\ntwo", "three"],
        "summaries": ["sum"], "keywords": ["k1", "k2"],
    }), 7)
    assert doc.documentid == "docid-3894"
    assert (doc.ontology, doc.title, doc.language) == ("asylum", "T", "de")
    assert doc.properties == {"court": "VG", "year": 2021, "published": True}
    assert doc.categories == {"COUNTRY_OF_ORIGIN": ("IQ", "SY"), "DECISION": ("granted asylum",)}
    assert [c.fragmentid for c in doc.chapters] == ["docid-3894-c1", "docid-3894-c2"]
    assert [c.ordinal for c in doc.chapters] == [1, 2]
    assert [s.fragmentid for s in doc.summaries] == ["docid-3894-s1"]
    assert [(k.fragmentid, k.text) for k in doc.keywords] == [
        ("docid-3894-k1", "k1"), ("docid-3894-k2", "k2")]
    assert all(f.documentid == "docid-3894" for f in doc.fragments())
    assert doc.line_number == 7
    assert doc.has_text


def test_paragraphs_are_numbered_through_the_whole_document() -> None:
    doc = document_from_dict({
        "documentid": "d-1",
        "chapters": ["a\n\nb\n   \n\nc", "d", "e\r\n\r\nf"],
    })
    assert [(p.fragmentid, p.text, p.chapter_fragmentid, p.ordinal) for p in doc.paragraphs] == [
        ("d-1-p1", "a", "d-1-c1", 1),
        ("d-1-p2", "b", "d-1-c1", 2),
        ("d-1-p3", "c", "d-1-c1", 3),
        ("d-1-p4", "d", "d-1-c2", 4),
        ("d-1-p5", "e", "d-1-c3", 5),
        ("d-1-p6", "f", "d-1-c3", 6),
    ]


def test_split_paragraphs_keeps_single_newlines() -> None:
    assert split_paragraphs("line one\nline two\n\n  next  \n\n\n") == [
        "line one\nline two", "next"]


def test_explicit_paragraphs_one_list_per_chapter() -> None:
    doc = document_from_dict({
        "documentid": "d-2",
        "chapters": ["first chapter text", "second"],
        "paragraphs": [["x", "y"], ["z"]],
    })
    assert [(p.fragmentid, p.text, p.chapter_fragmentid) for p in doc.paragraphs] == [
        ("d-2-p1", "x", "d-2-c1"), ("d-2-p2", "y", "d-2-c1"), ("d-2-p3", "z", "d-2-c2")]
    assert doc.chapters[0].text == "first chapter text"


def test_explicit_paragraphs_without_chapters_build_the_chapters() -> None:
    doc = document_from_dict({"documentid": "d-3", "paragraphs": [["x", "y"], ["z"]]})
    assert [c.text for c in doc.chapters] == ["x\n\ny", "z"]
    assert [p.fragmentid for p in doc.paragraphs] == ["d-3-p1", "d-3-p2", "d-3-p3"]


def test_document_with_only_categories_is_valid() -> None:
    doc = document_from_dict({"documentid": "d-4", "categories": {"TAG": ["a"]}})
    assert doc.categories == {"TAG": ("a",)}
    assert not doc.has_text
    assert list(doc.fragments()) == []


def test_special_category_values_are_verbatim() -> None:
    doc = document_from_dict({"documentid": "d-5",
                              "categories": {"PROCEDURE": "art$16", "TAG": ["x}y", "{$a}"]}})
    assert doc.categories == {"PROCEDURE": ("art$16",), "TAG": ("x}y", "{$a}")}


def test_empty_category_list_means_no_category() -> None:
    assert document_from_dict({"documentid": "d", "categories": {"TAG": []}}).categories == {}


def test_documentid_may_contain_hyphens() -> None:
    doc = document_from_dict({"documentid": "a-b-2021-x", "chapters": ["t"]})
    assert document_id_of(doc.chapters[0].fragmentid) == "a-b-2021-x"


# --- embeddings -----------------------------------------------------------------------------


def test_embeddings_keyed_by_fragment_id() -> None:
    doc = document_from_dict({
        "documentid": "d-6", "chapters": ["a\n\nb"], "summaries": ["s"],
        "embeddings": {"d-6-c1": [1, 0.5], "d-6-p2": [0.0, 1.0], "d-6-s1": [3, 4]},
    })
    assert doc.chapters[0].embedding == (1.0, 0.5)
    assert [p.embedding for p in doc.paragraphs] == [None, (0.0, 1.0)]
    assert doc.summaries[0].embedding == (3.0, 4.0)


def test_questions_are_numbered_from_one_and_embedded_like_summaries() -> None:
    doc = document_from_dict({
        "documentid": "d-q", "chapters": ["a"], "summaries": ["s"],
        "questions": ["Who may stay?", "  Why was the appeal allowed?  "], "keywords": ["k"],
        "embeddings": {"questions": [None, [0.6, 0.8]], "d-q-s1": [1.0, 0.0]},
    })
    assert [(q.kind, q.fragmentid, q.ordinal, q.text, q.embedding) for q in doc.questions] == [
        ("question", "d-q-q1", 1, "Who may stay?", None),
        ("question", "d-q-q2", 2, "Why was the appeal allowed?", (0.6, 0.8))]
    assert [f.fragmentid for f in doc.fragments()] == [
        "d-q-c1", "d-q-p1", "d-q-s1", "d-q-q1", "d-q-q2", "d-q-k1"]
    assert [f.fragmentid for f in doc.embeddable()] == [
        "d-q-c1", "d-q-p1", "d-q-s1", "d-q-q1", "d-q-q2"]
    assert document_id_of("d-q-q2") == "d-q"
    assert "questions" not in doc.properties
    only_questions = document_from_dict({"documentid": "d-only", "questions": "Who?",
                                         "embeddings": {"d-only-q1": [0.0, 2.0]}})
    assert only_questions.has_text and only_questions.questions[0].embedding == (0.0, 2.0)


def test_embeddings_keyed_by_kind() -> None:
    doc = document_from_dict({
        "documentid": "d-7", "chapters": ["a\n\nb", "c"],
        "embeddings": {"chapters": [[1.0], None], "paragraphs": [None, [2.0], [3.0]]},
    })
    assert [c.embedding for c in doc.chapters] == [(1.0,), None]
    assert [p.embedding for p in doc.paragraphs] == [None, (2.0,), (3.0,)]


@pytest.mark.parametrize(("embeddings", "message"), [
    ({"d-8-c9": [1.0]}, "not a chapter, paragraph, summary or question id"),
    ({"d-8-k1": [1.0]}, "not a chapter, paragraph, summary or question id"),
    ({"d-8-c1": []}, "non-empty list of numbers"),
    ({"d-8-c1": "0.1,0.2"}, "non-empty list of numbers"),
    ({"d-8-c1": [1.0, "x"]}, "not a finite number"),
    ({"d-8-c1": [1.0, True]}, "not a finite number"),
    ({"d-8-c1": [1.0, None]}, "not a finite number"),
    ({"chapters": [[1.0], [2.0]]}, "2 entries for 1 chapters"),
    ({"chapters": {"a": 1}}, "must be a list of vectors"),
    ([1.0], "embeddings must be an object"),
])
def test_bad_embeddings(embeddings: Any, message: str) -> None:
    obj = {"documentid": "d-8", "chapters": ["a"], "keywords": ["k"], "embeddings": embeddings}
    error = only_error(["\n", line(obj)])
    assert error.line_number == 2
    assert message in error.message


def test_nan_in_embedding_is_rejected() -> None:
    error = only_error(['{"documentid": "d", "chapters": ["a"], "embeddings": '
                        '{"d-c1": [NaN]}}'])
    assert "not a finite number" in error.message


# --- validation errors with line numbers ----------------------------------------------------


GOOD = line({"documentid": "ok-1", "chapters": ["fine"]})


@pytest.mark.parametrize(("bad_line", "message"), [
    ("{not json\n", "not valid JSON"),
    ('{"documentid": "d"\n', "delimiter at the end of the line"),
    ('{"documentid" "d"}\n', "delimiter at character 15"),
    ('["a list"]\n', "must be a JSON object, not a list"),
    ('"text"\n', "must be a JSON object, not a string"),
    (line({"title": "no id"}), "missing documentid"),
    (line({"documentid": ""}), "documentid is empty"),
    (line({"documentid": 42}), "documentid must be a string"),
    (line({"documentid": "has space"}), "whitespace or control characters"),
    (line({"documentid": "tab\there"}), "whitespace or control characters"),
    (line({"documentid": "docid-1-c1"}), "ends like a fragment id"),
    (line({"documentid": "x-p12"}), "ends like a fragment id"),
    (line({"documentid": "d", "ontology": 3}), "ontology must be a string"),
    (line({"documentid": "d", "ontology": " "}), "ontology is blank"),
    (line({"documentid": "d", "title": ["t"]}), "title must be a string"),
    (line({"documentid": "d", "language": False}), "language must be a string"),
    (line({"documentid": "d", "chapters": {"a": 1}}), "chapters must be a list of strings"),
    (line({"documentid": "d", "chapters": ["a", 2]}), "chapters[2] must be a string"),
    (line({"documentid": "d", "chapters": ["a", "  "]}), "chapters[2] is blank"),
    (line({"documentid": "d", "summaries": [None]}), "summaries[1] must be a string"),
    (line({"documentid": "d", "keywords": 5}), "keywords must be a list of strings"),
    (line({"documentid": "d", "questions": 5}), "questions must be a list of strings"),
    (line({"documentid": "d", "questions": ["why?", None]}), "questions[2] must be a string"),
    (line({"documentid": "d", "questions": ["why?", " "]}), "questions[2] is blank"),
    (line({"documentid": "x-q3"}), "ends like a fragment id"),
    (line({"documentid": "d", "categories": ["IQ"]}), "categories must be an object"),
    (line({"documentid": "d", "categories": {"COUNTRY OF ORIGIN": "IQ"}}),
     "category name 'COUNTRY OF ORIGIN' must match"),
    (line({"documentid": "d", "categories": {"1ABC": "IQ"}}), "must match"),
    (line({"documentid": "d", "categories": {"YEAR": 2021}}),
     "category YEAR must be a string or a list of strings, not a number"),
    (line({"documentid": "d", "categories": {"YEAR": [2021]}}),
     "category YEAR has a value that is a number"),
    (line({"documentid": "d", "categories": {"TAG": [" "]}}), "category TAG has a blank value"),
    (line({"documentid": "d", "categories": {"TAG": {"a": "b"}}}), "not an object"),
    (line({"documentid": "d", "extra": {"nested": 1}}), "property 'extra' must be a string"),
    (line({"documentid": "d", "tags": ["a"]}), "property 'tags' must be a string"),
    (line({"documentid": "d", "bad key": 1}), "property name 'bad key' must match"),
    (line({"documentid": "d", "paragraphs": "a"}), "one list of strings per chapter"),
    (line({"documentid": "d", "paragraphs": ["a", "b"]}), "one list of strings per chapter"),
    (line({"documentid": "d", "chapters": ["a"], "paragraphs": [["a"], ["b"]]}),
     "paragraphs has 2 lists but there are 1 chapters"),
    (line({"documentid": "d", "chapters": ["a"], "paragraphs": [[1]]}),
     "paragraphs[1][1] must be a string"),
    (line({"documentid": "d", "chapters": ["a"], "paragraphs": [[""]]}),
     "paragraphs[1][1] is blank"),
    (line({"documentid": "d", "paragraphs": [[]]}), "paragraphs[1] is empty"),
])
def test_validation_errors_carry_the_line_number(bad_line: str, message: str) -> None:
    parsed = list(iter_documents([GOOD, "\n", bad_line, GOOD]))
    assert [type(p) for p in parsed] == [SourceDocument, LineError, SourceDocument]
    error = parsed[1]
    assert isinstance(error, LineError)
    assert error.line_number == 3
    assert message in error.message, error.message
    exc = error.to_exception()
    assert isinstance(exc, IngestError)
    assert exc.line_number == 3
    assert str(exc).startswith("line 3: ")


def test_parse_document_raises_ingest_error() -> None:
    with pytest.raises(IngestError) as info:
        parse_document('{"documentid": ""}', 12)
    assert info.value.line_number == 12
    assert str(info.value) == "line 12: documentid is empty"


def test_invalid_utf8_is_a_line_error(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(GOOD.encode() + b'{"documentid": "\xff"}\n' + GOOD.encode())
    parsed = list(iter_documents(path))
    assert isinstance(parsed[1], LineError)
    assert parsed[1].line_number == 2
    assert "UTF-8" in parsed[1].message


def test_bom_blank_lines_and_bytes_lines() -> None:
    parsed = list(iter_documents(["\ufeff" + GOOD, "   \n", b"\n", GOOD.encode()]))
    assert [p.line_number for p in parsed] == [1, 4]
    assert all(isinstance(p, SourceDocument) for p in parsed)


def test_duplicate_documentids_are_both_yielded_in_order() -> None:
    first = line({"documentid": "dup-1", "title": "old"})
    second = line({"documentid": "dup-1", "title": "new"})
    docs = list(read_documents([first, second]))
    assert [d.title for d in docs] == ["old", "new"]   # ingesting in order: later wins


def test_read_documents_raises_or_skips() -> None:
    lines = [GOOD, "oops\n", GOOD]
    with pytest.raises(IngestError) as info:
        list(read_documents(lines))
    assert info.value.line_number == 2
    errors: list[LineError] = []
    docs = list(read_documents(lines, skip_errors=True, errors=errors))
    assert len(docs) == 2
    assert [e.line_number for e in errors] == [2]


# --- streaming ------------------------------------------------------------------------------


def test_streams_lazily_from_an_endless_source() -> None:
    pulled = 0

    def endless() -> Iterator[str]:
        nonlocal pulled
        n = 0
        while True:
            n += 1
            pulled += 1
            yield line({"documentid": f"doc-{n}", "chapters": [f"text {n}"]})

    it = iter_documents(endless())
    assert pulled == 0                     # nothing read before the first next()
    first = next(it)
    assert isinstance(first, SourceDocument)
    assert first.documentid == "doc-1"
    assert pulled == 1
    for _ in range(999):
        next(it)
    assert pulled == 1000


def test_reads_a_large_file_line_by_line(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for n in range(5000):
            out.write(line({"documentid": f"doc-{n}", "chapters": ["a\n\nb"]}))
    it = iter_documents(path)
    first = next(it)
    assert isinstance(first, SourceDocument)
    assert sum(1 for _ in it) == 4999


# --- the sample corpus ----------------------------------------------------------------------


def sample_corpus() -> list[SourceDocument]:
    ref = resources.files("thalabus_graph") / "resources" / "sample_corpus.jsonl"
    with resources.as_file(ref) as path:
        return list(read_documents(path))


def test_sample_corpus_is_valid_and_varied() -> None:
    docs = sample_corpus()
    assert 25 <= len(docs) <= 40
    assert len({d.documentid for d in docs}) == len(docs)
    assert {d.ontology for d in docs} == {"asylum", "stories"}
    assert {d.language for d in docs} == {"de", "fr", "en"}
    countries = {v for d in docs for v in d.categories.get("COUNTRY_OF_ORIGIN", ())}
    assert {"IQ", "SY", "AF", "ER", "IR"} <= countries
    values = {v for d in docs for vs in d.categories.values() for v in vs}
    assert "granted asylum" in values
    assert any("$" in v or "}" in v for v in values)
    text = " ".join(f.text for d in docs for f in d.fragments())
    for needle in ("Jane's", '"', ":", "(", " AND ", "*", "/", "C++"):
        assert needle in text, needle
    assert all(1 <= len(d.chapters) <= 4 for d in docs if d.has_text)
    assert any(not d.has_text for d in docs)           # a category-only record


# --- hostile values: line errors, never crashes ---------------------------------------------


@pytest.mark.parametrize(("bad_line", "message"), [
    ('{"documentid": "d", "chapters": ["x"], "embeddings": {"d-c1": [1' + "0" * 400 + "]}}",
     "too large for a float at position 1"),
    ('{"documentid": "d", "n": ' + str(2**64) + "}", "outside the signed 64-bit range"),
    ('{"documentid": "d", "n": ' + str(-(2**63) - 1) + "}", "outside the signed 64-bit range"),
    ('{"documentid": "d", "chapters": ["ok", "a\\ud800"]}',
     "chapters[2] holds a lone surrogate (U+D800 at character 2)"),
    ('{"documentid": "d", "chapters": ["a"], "paragraphs": [["\\udc00"]]}',
     "paragraphs[1][1] holds a lone surrogate"),
    ('{"documentid": "d", "categories": {"K": ["ok", "\\ud800"]}}',
     "category K value holds a lone surrogate"),
    ('{"documentid": "d\\ud800"}', "documentid holds a lone surrogate"),
    ('{"documentid": "d", "title": "\\ud800"}', "title holds a lone surrogate"),
    ('{"documentid": "d", "court": "\\ud800"}', "property 'court' holds a lone surrogate"),
    ('{"documentid": "d", "x": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
    (line({"documentid": "d" * 2049}), "documentid is 2049 bytes long"),
    (line({"documentid": "d", "ontology": "o" * 3000}), "ontology is 3000 bytes long"),
    (line({"documentid": "d", "categories": {"K": "é" * 1025}}),
     "category K value is 2050 bytes long"),
    (line({"documentid": "d", "categories": {"K" * 2049: "v"}}),
     "category name is 2049 bytes long"),
])
def test_hostile_values_are_line_errors(bad_line: str, message: str) -> None:
    parsed = list(iter_documents([GOOD, bad_line + "\n", GOOD]))
    assert [type(p) for p in parsed] == [SourceDocument, LineError, SourceDocument]
    error = parsed[1]
    assert isinstance(error, LineError) and error.line_number == 2
    assert message in error.message, error.message


def test_keys_at_the_limit_are_accepted() -> None:
    from thalabus_graph.ingest.source import MAX_KEY_BYTES

    doc = document_from_dict({"documentid": "d" * MAX_KEY_BYTES,
                              "categories": {"K": "v" * MAX_KEY_BYTES}})
    assert len(doc.documentid) == MAX_KEY_BYTES and doc.categories["K"] == ("v" * MAX_KEY_BYTES,)


def test_hostile_python_values_are_ingest_errors() -> None:
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    for bad in ({"documentid": "d", "chapters": [deep]}, {"documentid": "d", 3: "x"},
                {"documentid": "d", "categories": {3: "x"}}, {"documentid": "d", "n": 2**70},
                {"documentid": "d", "chapters": ["x"], "embeddings": {"d-c1": [10 ** 400]}}):
        with pytest.raises(IngestError) as info:
            document_from_dict(bad, 5)
        assert info.value.line_number == 5


def test_identifiers_are_stored_in_the_form_every_query_asks_in() -> None:
    doc = document_from_dict({
        "documentid": "forms-1", "ontology": "Cafe\u0301", "chapters": ["text"],
        "categories": {"TOPIC": ["\ufb01nance", "\uff24\uff45"], "PLACE": "Cafe\u0301"}})
    assert doc.ontology == "Café" == id_form("Cafe\u0301")
    assert doc.categories == {"TOPIC": ("finance", "De"), "PLACE": ("Café",)}
    assert Category("TOPIC", ("\ufb01nance",)).values == ("finance",)
    assert Category("PLACE", ("Cafe\u0301",)).values == doc.categories["PLACE"]
