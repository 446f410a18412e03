"""Fuzzed ingest files: hostile JSON lines mixed with good ones never abort a run.

Hypothesis writes files of good documents (arbitrary Unicode text, duplicates allowed) and
lines known to be bad (lone surrogates, out-of-range integers, 400-digit numbers, deep
nesting, over-long keys, broken or non-object JSON, wrong types). The run must not raise;
exactly the bad lines are reported, by number; every good document lands, as its last line.
"""

from __future__ import annotations

import json
import unicodedata
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.adversarial.conftest import HashEmbedder
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.graph.database import Database

pytestmark = pytest.mark.integration

TEXT = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=60).filter(
    lambda t: bool(t.strip()))
SURROGATE = st.characters(categories=("Cs",)).map(lambda c: json.dumps(c))  # "\\ud8xx"


@st.composite
def good_line(draw: st.DrawFn, prefix: str) -> tuple[str, dict[str, Any]]:
    doc: dict[str, Any] = {"documentid": f"{prefix}-{draw(st.integers(0, 6))}"}
    if draw(st.booleans()):
        doc["chapters"] = draw(st.lists(TEXT, max_size=3))
    if draw(st.booleans()):
        doc["categories"] = {"TAG": draw(st.lists(TEXT, max_size=2))}
    if draw(st.booleans()):
        doc["year"] = draw(st.integers(-(2**63), 2**63 - 1))
    if draw(st.booleans()):
        doc["title"] = draw(TEXT)
    return json.dumps(doc, ensure_ascii=draw(st.booleans())), doc


def bad_lines(prefix: str) -> st.SearchStrategy[str]:
    doc = f'{{"documentid": "{prefix}-bad"'
    return st.one_of(
        SURROGATE.map(lambda s: f'{doc}, "chapters": [{s}]}}'),
        SURROGATE.map(lambda s: f'{doc}, "categories": {{"TAG": {s}}}}}'),
        SURROGATE.map(lambda s: f'{{"documentid": {s}}}'),
        SURROGATE.map(lambda s: f'{doc}, "title": {s}}}'),
        st.integers(min_value=2**63).map(lambda n: f'{doc}, "n": {n}}}'),
        st.integers(max_value=-(2**63) - 1).map(lambda n: f'{doc}, "n": {n}}}'),
        st.integers(309, 500).map(
            lambda n: f'{doc}, "chapters": ["x"], "embeddings": {{"{prefix}-bad-c1": '
                      f'[1{"0" * n}]}}}}'),
        st.integers(1_100, 20_000).map(lambda n: f'{doc}, "x": {"[" * n}{"]" * n}}}'),
        st.integers(2_049, 12_000).map(lambda n: json.dumps({"documentid": "d" * n})),
        st.integers(2_049, 12_000).map(
            lambda n: json.dumps({"documentid": f"{prefix}-bad", "categories": {"K": "v" * n}})),
        st.text(st.characters(exclude_characters="}\n"), max_size=30).map(lambda t: "{" + t),
        st.one_of(st.integers(), st.lists(st.integers()), TEXT).map(json.dumps),
        st.sampled_from(['{"documentid": 5}', '{"documentid": ""}', '{"documentid": null}',
                         f'{doc}, "chapters": [1]}}', f'{doc}, "categories": [1]}}',
                         f'{doc}, "chapters": ["  "]}}', f'{doc}, "nested": {{"a": 1}}}}']),
    )


@st.composite
def files(draw: st.DrawFn) -> tuple[str, list[str], set[int], dict[str, dict[str, Any]]]:
    prefix = f"fz{uuid.uuid4().hex[:10]}"
    lines: list[str] = []
    bad: set[int] = set()
    last: dict[str, dict[str, Any]] = {}
    for number in range(1, draw(st.integers(1, 12)) + 1):
        if draw(st.booleans()):
            lines.append(draw(bad_lines(prefix)))
            bad.add(number)
        else:
            text, doc = draw(good_line(prefix))
            lines.append(text)
            last[doc["documentid"]] = doc
    return prefix, lines, bad, last


def check_file(db: Database, tmp_path: Path,
               case: tuple[str, list[str], set[int], dict[str, dict[str, Any]]]) -> None:
    """Ingest the file: no exception, exactly the bad lines reported, good ones stored."""
    prefix, lines, bad, last = case
    engine_settings = Settings.from_env(write_batch_size=5)
    graph = ThalabusGraph(db, settings=engine_settings,
                          embedder=HashEmbedder(engine_settings.embedding_dimensions))
    path = tmp_path / f"{prefix}.jsonl"
    # surrogatepass: a raw surrogate in a broken line becomes bytes that are not UTF-8
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8", "surrogatepass"))
    report = graph.ingest(path, progress=False)  # must not raise
    assert {e.line_number for e in report.errors} == bad, report.errors
    rows = db.driver.execute_query(
        "MATCH (d:Document) WHERE d.documentid STARTS WITH $prefix "
        "RETURN d.documentid AS id, d.title AS title, "
        "[(d)<-[:IN_DOCUMENT]-(c:Chapter) | [c.ordinal, c.text]] AS chapters",
        {"prefix": prefix + "-"}, database_=db.database).records
    stored = {r["id"]: r for r in rows}
    assert set(stored) == set(last)
    for documentid, doc in last.items():
        chapters = [text for _, text in sorted(stored[documentid]["chapters"])]
        # text is stored in NFC (a compatibility ideograph such as U+F900 becomes U+8C48)
        assert chapters == [_nfc(t.strip()) for t in doc.get("chapters", [])]
        title = doc.get("title")
        assert stored[documentid]["title"] == (title if title is None else _nfc(title))


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


HEALTH = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large]
Case = tuple[str, list[str], set[int], dict[str, dict[str, Any]]]


@settings(max_examples=15, deadline=None, suppress_health_check=HEALTH)
@given(case=files())
@example(case=("fznfc", ['{"documentid": "fznfc-0", "title": "\uf900", "chapters": ["\uf900"]}'],
               set(), {"fznfc-0": {"documentid": "fznfc-0", "title": "\uf900",
                                   "chapters": ["\uf900"]}}))
def test_fuzzed_lines_never_abort_a_run(clean_db: Database, tmp_path: Path, case: Case) -> None:
    """Each example uses its own id prefix, so the database is cleaned once per test."""
    check_file(clean_db, tmp_path, case)


@pytest.mark.stress
@settings(max_examples=300, deadline=None, suppress_health_check=HEALTH)
@given(case=files())
def test_many_fuzzed_files_never_abort_a_run(clean_db: Database, tmp_path: Path,
                                             case: Case) -> None:
    """The same property, 300 files (make stress)."""
    check_file(clean_db, tmp_path, case)
