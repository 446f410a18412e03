"""A phrase about something the sample corpus lacks returns nothing on the calibrated scale; a
phrase about something it holds returns its documents (``tests/benchmarks/sample_topics.py``).

The shipped calibration's phrase gate (the best candidate's cosine and the share of the
phrase's words found in one candidate) was fitted on SciFact train and xquad-r dev (absent
topics built there by removing a question's article), never on the sample corpus, so these
phrases are held out. ``multilingual-e5-small`` with the lexical share still cannot tell every
absent topic from a present one (``docs/architecture.md``, "Score calibration"): the
assertions are the counts the benchmark measured (21 of 24 absent phrases return nothing, 21 of
22 present ones return their documents), and every present phrase in a language the corpus is
written in returns its documents.
"""

from __future__ import annotations

import pytest

from tests.benchmarks.quality import semantic_phrase
from tests.benchmarks.sample_topics import ABSENT, PRESENT
from tests.integration.sample import documents, load_sample
from thalabus_graph import Settings, ThalabusGraph
from thalabus_graph.graph.database import Database

pytestmark = pytest.mark.integration

ABSENT_SILENCED = 21
"""Absent phrases that must return nothing (of 24; the benchmark's count on the sample)."""
PRESENT_KEPT = 21
"""Present phrases that must return their documents (of 22; the one lost is in a language no
sample document is written in)."""


@pytest.fixture(scope="module")
def graph(db: Database, db_settings: Settings) -> ThalabusGraph:
    """The sample corpus, searched with the shipped calibration."""
    return load_sample(db, db_settings.replace(calibration_file=""))


def test_phrases_about_absent_topics_return_no_fragments(graph: ThalabusGraph) -> None:
    returned = {phrase: graph.query(semantic_phrase(phrase), return_documents=False).fragments
                for _, phrase in ABSENT}
    assert len({language for language, _ in ABSENT}) >= 4
    leaking = {phrase: [(f.documentid, round(f.score, 3)) for f in found[:3]]
               for phrase, found in returned.items() if found}
    print(f"absent phrases returning fragments: {len(leaking)}/{len(ABSENT)} {leaking}")
    assert len(ABSENT) == 24
    assert len(returned) - len(leaking) >= ABSENT_SILENCED, leaking


def test_phrases_about_present_topics_return_their_documents(graph: ThalabusGraph) -> None:
    written_in = {d["language"] for d in documents()}
    missed: dict[str, list[str]] = {}
    for language, phrase, wanted in PRESENT:
        found = graph.query(semantic_phrase(phrase), return_documents=False).fragments
        assert all(f.score >= graph.settings.min_score for f in found)
        if not wanted & {f.documentid for f in found}:
            missed[phrase] = [f.documentid for f in found[:3]]
            assert language not in written_in, (phrase, missed[phrase])
    print(f"present phrases missing their documents: {len(missed)}/{len(PRESENT)} {missed}")
    assert len(PRESENT) == 22
    assert len(PRESENT) - len(missed) >= PRESENT_KEPT, missed
