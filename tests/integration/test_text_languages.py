"""Text search in each document's language (migration V0009, ``text_languages``,
``search.languages``): a phrase's bag of words is searched with its language's analyzer, text
in a language without one stays on the neutral indexes, a graph migrated before V0009 keeps
answering and is labelled by the backfill with fragment ids and datasets kept, and user text
never reaches Lucene as syntax."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.sample import shared_embedder
from tests.integration.test_migrations import migrate_before, runner
from tests.support.paths import phrase_call
from thalabus_graph import Settings, ThalabusGraph, languages, lucene
from thalabus_graph.errors import UnknownLanguageError
from thalabus_graph.graph.database import Database
from thalabus_graph.graph.migrations import MigrationRunner
from thalabus_graph.search.executor import bag_of_words
from thalabus_graph.text_languages import backfill

pytestmark = [pytest.mark.integration, pytest.mark.schema_changes]
__all__ = ["runner"]  # the fixture, imported so this module shares it
LANGUAGES_VERSION = 9

DOCS: list[dict[str, Any]] = [
    {"documentid": "de-1", "language": "de",
     "chapters": ["Die alten Häuser der Stadt stehen am Fluss."], "keywords": ["Altstadt"]},
    {"documentid": "de-2", "language": "de",
     "chapters": ["Der Hund und die Katze schlafen im Garten."]},
    {"documentid": "en-1", "language": "en",
     "chapters": ["The runners were running through the old harbour."]},
    {"documentid": "en-2", "chapters": ["Cats and dogs were sleeping in the garden all day."]},
    {"documentid": "vi-1", "language": "vi",
     "chapters": ["Những ngôi nhà cổ của thành phố nằm bên bờ sông."]},
]


@pytest.fixture()
def graph(clean_db: Database) -> ThalabusGraph:
    g = ThalabusGraph(clean_db, settings=Settings.from_env(), embedder=shared_embedder())
    assert g.ingest(DOCS, progress=False).errors == []
    return g


def text_hits(graph: ThalabusGraph, phrase: str, *, language: str | None = None,
              settings: Settings | None = None) -> tuple[set[str], list[dict[str, Any]]]:
    """The documents the phrase's bag-of-words search finds, and its steps' details."""
    if settings is not None:
        graph = ThalabusGraph(graph.db, settings=settings, embedder=shared_embedder())
    ex = graph.queries.executor(language=language)
    found = {f.documentid for f in bag_of_words(ex, phrase)}
    return found, [step.to_dict() for step in ex.steps]


def labels(db: Database) -> dict[str, list[str]]:
    """fragmentid -> its language labels, for chapters and keywords."""
    every = set(languages.all_labels("Chapter")) | set(languages.all_labels("Keyword"))
    records = db.driver.execute_query(
        "MATCH (f:Fragment) WHERE f:Chapter OR f:Keyword RETURN f.fragmentid AS id, "
        "labels(f) AS labels", database_=db.database).records
    return {r["id"]: sorted(set(r["labels"]) & every) for r in records}


def text_steps(tree: Any) -> Iterator[dict[str, Any]]:
    """Every text step of an explain or profile tree."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("kind") == "text":
                yield node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def test_ingest_labels_fragments_with_the_stated_or_detected_language(
        graph: ThalabusGraph, clean_db: Database) -> None:
    assert labels(clean_db) == {
        "de-1-c1": ["GermanChapter"], "de-1-k1": ["GermanKeyword"],
        "de-2-c1": ["GermanChapter"], "en-1-c1": ["EnglishChapter"],
        "en-2-c1": ["EnglishChapter"],  # states none: detected
        "vi-1-c1": [],  # no analyzer: neutral only
    }
    # Re-ingested in another language, the fragment moves (same id, one label).
    moved = {**DOCS[3], "language": "de"}
    assert graph.ingest([moved], progress=False).fragments_deleted == 0
    assert labels(clean_db)["en-2-c1"] == ["GermanChapter"]


def test_an_inflected_german_form_finds_the_german_document(graph: ThalabusGraph) -> None:
    found, steps = text_hits(graph, "Haus", language="de")
    assert "de-1" in found  # "Häuser" stems to "haus" with the german analyzer
    assert {s["index"] for s in steps if s["kind"] == "text"} == {
        "chapters_fulltext_german", "keywords_fulltext_german"}
    assert all(s["analyzer"] == "german" and s["language_from"] == "given"
               for s in steps if s["kind"] == "text")
    neutral, _ = text_hits(graph, "Haus", language="de",
                           settings=graph.settings.replace(fulltext_languages=False))
    assert "de-1" not in neutral  # the neutral analyzer does not stem


def test_a_detected_language_picks_its_analyzer(graph: ThalabusGraph) -> None:
    found, steps = text_hits(graph, "Wo stehen die alten Häuser am Fluss?")
    text = [s for s in steps if s["kind"] == "text"]
    assert text and all(s["language"] == "de" and s["language_from"] == "detected"
                        and s["analyzer"] == "german" for s in text)
    assert found <= {"de-1", "de-2"} and "de-1" in found  # only German text is searched


def test_english_stemming(graph: ThalabusGraph) -> None:
    found, _ = text_hits(graph, "run", language="en")
    assert found == {"en-1"}  # "runners"/"running" -> "run"
    found, _ = text_hits(graph, "the dog sleeps in a garden", language="English")
    assert "en-2" in found
    neutral, _ = text_hits(graph, "run", settings=graph.settings.replace(
        fulltext_languages=False))
    assert "en-1" not in neutral


def test_a_language_without_an_analyzer_uses_the_neutral_index(graph: ThalabusGraph) -> None:
    found, steps = text_hits(graph, "ngôi nhà cổ", language="vi")
    text = [s for s in steps if s["kind"] == "text"]
    assert {s["index"] for s in text} == {"chapters_fulltext", "keywords_fulltext"}
    assert all(s["analyzer"] == graph.settings.fulltext_analyzer
               and s["analyzer_reason"] == "no analyzer for 'vi'" for s in text)
    assert found == {"vi-1"}


def test_explain_and_profile_show_the_analyzer_and_the_detected_language(
        graph: ThalabusGraph) -> None:
    query = '"Wo schlafen der Hund und die Katze?"'
    explained = list(text_steps(graph.explain(query)))
    result = graph.query(query, profile=True)
    assert result.plan is not None
    profiled = list(text_steps(result.plan["tree"]))
    for steps in (explained, profiled):
        assert steps and all(s["analyzer"] == "german" and s["language"] == "de"
                             and s["language_from"] == "detected" for s in steps)
    assert "de-2" in {d.documentid for d in result.documents or []}


def test_user_text_never_reaches_lucene_as_syntax(graph: ThalabusGraph) -> None:
    hostile = 'Katze NOT Hund) OR text:* AND "Häuser~2 \\ [a TO z] {!} ^3 /reg/'
    found, steps = text_hits(graph, hostile, language="de")
    text = [s for s in steps if s["kind"] == "text"]
    assert text and all(s["lucene"] == lucene.terms_query(hostile) for s in text)
    # NOT, OR and AND are plain words: the cat and the houses are both found, nothing fails.
    assert {"de-1", "de-2"} <= found
    assert graph.query(f'"{hostile.replace(chr(92), "").replace(chr(34), "")}"',
                       language="de").fragments


def test_a_graph_migrated_before_v0009_answers_then_backfills_keeping_ids_and_datasets(
        runner: MigrationRunner, db: Database, db_settings: Settings, tmp_path: Path) -> None:
    migrate_before(runner, db_settings, tmp_path, LANGUAGES_VERSION)
    old = ThalabusGraph(db, settings=db_settings, embedder=shared_embedder())
    assert old.ingest(DOCS, progress=False).errors == []
    # As ingest wrote it before V0009: no fragment carries a language label.
    db.driver.execute_query("MATCH (f:Fragment) REMOVE f:$($labels)",
                            labels=languages.all_labels("Chapter")
                            + languages.all_labels("Keyword"), database_=db.database)
    ids_before = set(labels(db))
    result = old.query('"Häuser am Fluss"', create_dataset=True, language="de")
    dataset = result.dataset_ids[0]
    members = sorted(m.fragmentid for m in old.datasets.members(dataset))
    found, steps = text_hits(old, "Häuser", language="de")
    assert "de-1" in found and all(
        s["index"] in ("chapters_fulltext", "keywords_fulltext")
        and "migration V0009" in s["analyzer_reason"] for s in steps if s["kind"] == "text")

    report = runner.migrate()
    assert LANGUAGES_VERSION in [s.version for s in report.applied]
    fresh = ThalabusGraph(db, settings=db_settings, embedder=shared_embedder())
    _, steps = text_hits(fresh, "Häuser", language="de")
    assert all("await their language labels" in s["analyzer_reason"]
               for s in steps if s["kind"] == "text")  # pending: still neutral

    assert backfill(db, batch=2) == len(DOCS)
    assert backfill(db) == 0
    assert set(labels(db)) == ids_before
    assert labels(db)["de-1-c1"] == ["GermanChapter"] and labels(db)["vi-1-c1"] == []
    fresh = ThalabusGraph(db, settings=db_settings, embedder=shared_embedder())
    found, steps = text_hits(fresh, "Haus", language="de")
    assert "de-1" in found and all(s["analyzer"] == "german"
                                   for s in steps if s["kind"] == "text")
    assert sorted(m.fragmentid for m in fresh.datasets.members(dataset)) == members

    # Re-ingest keeps fragment identity, dataset members and the labels.
    again = fresh.ingest(DOCS, progress=False)
    assert again.fragments_deleted == 0 and not again.members_dropped
    assert set(labels(db)) == ids_before and labels(db)["de-1-k1"] == ["GermanKeyword"]
    assert sorted(m.fragmentid for m in fresh.datasets.members(dataset)) == members
    db.write("migrations_delete_data_nodes")


def test_the_graphs_languages_are_read_once_not_per_query(
        graph: ThalabusGraph, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support.spies import spy_read_transactions

    state = graph.queries.text_languages()
    assert state.languages == {"de", "en"} and state.why_not is None
    # kept for the test: a slow or paused test process must not see it expire between queries
    monkeypatch.setattr(graph.queries.shared.text_languages, "recheck_seconds", float("inf"))
    call = phrase_call(graph)[0]
    reads = spy_read_transactions(graph, monkeypatch)
    graph.query('"Wo stehen die alten Häuser?"', return_documents=False)
    graph.query('"Where do the runners run?"', return_documents=False)
    assert reads == [call, call]


def test_an_unknown_language_is_refused_by_every_entry_point(graph: ThalabusGraph) -> None:
    phrase = '"chocolate cake recipe"'
    for run in (graph.query, graph.explain, graph.rag_fragments):
        for unknown in ("klingon", "xx"):
            with pytest.raises(UnknownLanguageError, match=f"unknown language '{unknown}'"):
                run(phrase, language=unknown)
    with pytest.raises(UnknownLanguageError):
        graph.query("KIND=a", language="klingon")
    assert graph.query(phrase, language="zh").documents is not None
