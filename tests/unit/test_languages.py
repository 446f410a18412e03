"""The language -> analyzer table, stated languages, and detection's edge cases
(``thalabus_graph.languages``), and the index choice without a graph (``search.languages``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from thalabus_graph import Settings, languages
from thalabus_graph.errors import ConfigurationError, UnknownLanguageError
from thalabus_graph.graph import cypher_library
from thalabus_graph.search.languages import PENDING_LABEL, TextLanguages
from thalabus_graph.text_languages import languages_for, sample_text


@pytest.mark.parametrize(("stated", "code", "analyzer"), [
    ("en", "en", "english"), ("de", "de", "german"), ("fr", "fr", "french"),
    ("es", "es", "spanish"), ("it", "it", "italian"), ("de-CH", "de", "german"),
    ("pt_BR", "pt", "portuguese"), ("EN", "en", "english"), (" German ", "de", "german"),
    ("nb", "no", "norwegian"), ("nn", "no", "norwegian"),
])
def test_a_stated_language_maps_to_its_analyzer(stated: str, code: str, analyzer: str) -> None:
    assert languages.language_of(stated) == code
    assert languages.analyzer_of(stated) == analyzer


@pytest.mark.parametrize("stated", [None, "", "vi", "zh", "ja", "th"])
def test_a_language_without_an_analyzer_is_neutral(stated: str | None) -> None:
    assert languages.language_of(stated) is None
    assert languages.analyzer_of(stated) is None
    assert languages.labels_of(languages.language_of(stated), "Chapter") == []
    assert languages.index_of(None, "chapters") == "chapters_fulltext"


@pytest.mark.parametrize("stated", ["de", "de-CH", " German ", "nb", "vi", "zh", "Chinese",
                                    "ja-JP", None, ""])
def test_a_known_language_is_accepted(stated: str | None) -> None:
    assert languages.checked_language(stated) == (stated if stated else None)


@pytest.mark.parametrize("stated", ["klingon", "xx", "tlh", "x y", "e", "deu"])
def test_an_unknown_language_is_refused_naming_the_known_ones(stated: str) -> None:
    with pytest.raises(UnknownLanguageError, match="unknown language") as caught:
        languages.checked_language(stated)
    assert isinstance(caught.value, ConfigurationError)
    for known in ("de", "en", "zh", "vi"):
        assert re.search(rf"\b{known}\b", str(caught.value))
    with pytest.raises(UnknownLanguageError):
        TextLanguages(Settings(), None, stated)


def test_every_analyzer_is_one_neo4j_ships_and_labels_and_indexes_follow_it() -> None:
    shipped = {"arabic", "armenian", "basque", "bulgarian", "catalan", "czech", "danish",
               "dutch", "english", "finnish", "french", "galician", "german", "greek", "hindi",
               "hungarian", "indonesian", "irish", "italian", "latvian", "lithuanian",
               "norwegian", "persian", "portuguese", "romanian", "russian", "spanish",
               "swedish", "turkish"}
    assert set(languages.LANGUAGES.values()) <= shipped
    assert languages.labels_of("de", "Chapter") == ["GermanChapter"]
    assert languages.index_of("de", "keywords") == "keywords_fulltext_german"
    assert len(set(languages.all_labels("Keyword"))) == len(languages.LANGUAGES)


def test_the_migration_builds_an_index_pair_for_every_language() -> None:
    from thalabus_graph.graph.cypher_library import migrations_dir

    text = (migrations_dir() / "V0009__fulltext_languages.cypher").read_text("utf-8")
    for code, analyzer in languages.LANGUAGES.items():
        for source, kind in (("chapters", "Chapter"), ("keywords", "Keyword")):
            name = languages.index_of(code, source)
            label = languages.labels_of(code, kind)[0]
            assert f"CREATE FULLTEXT INDEX {name} IF NOT EXISTS" in text
            block = text.split(f"CREATE FULLTEXT INDEX {name} ", 1)[1].split(";", 1)[0]
            assert f":{label})" in block and f"'{analyzer}'" in block


def test_empty_text_and_text_without_letters_have_no_language() -> None:
    for text in ("", "   ", "12.5 % -- 3", "!!!"):
        assert languages.detect(text, ["en", "de"]) == languages.NO_LANGUAGE


def test_no_candidate_means_no_language_and_one_candidate_is_the_answer() -> None:
    assert languages.detect("The dog sleeps", []).language is None
    assert languages.detect("The dog sleeps", ["vi", "zh"]).language is None  # no analyzer
    assert languages.detect("Der Hund schläft im Garten", ["en"]) == languages.Detection("en", 1.0)


def test_detection_among_candidates() -> None:
    candidates = ["en", "de", "es"]
    assert languages.detect("Welche Gerichte kocht man mit frischem Gemüse?",
                            candidates).language == "de"
    assert languages.detect("Which dishes are cooked with fresh vegetables?",
                            candidates).language == "en"
    found = languages.detect("¿Qué platos se cocinan con verduras frescas?", candidates)
    assert found.language == "es" and 0 < found.confidence <= 1


def _full_comparisons(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """The candidate sets ``detect`` builds full-model detectors for, from now on."""
    built: list[tuple[str, ...]] = []
    original = languages._detector

    def spy(codes: tuple[str, ...], *, light: bool = False) -> object:
        if not light:
            built.append(codes)
        return original(codes, light=light)

    monkeypatch.setattr(languages, "_detector", spy)
    return built


@pytest.mark.parametrize(("text", "language"), [
    ("Wie widerstehen Bakterien Antibiotika?", "de"),
    ("How do bacteria resist antibiotics?", "en"),
    ("¿Cómo resisten las bacterias a los antibióticos?", "es"),
    ("Comment les bactéries résistent-elles aux antibiotiques ?", "fr"),
    ("Come resistono i batteri agli antibiotici?", "it"),
    ("Πώς αντιστέκονται τα βακτήρια στα αντιβιοτικά;", "el"),
])
def test_the_full_models_weigh_the_candidates_and_a_shortlist_of_the_others(
        monkeypatch: pytest.MonkeyPatch, text: str, language: str) -> None:
    weighed = _full_comparisons(monkeypatch)
    found = languages.detect(text, ["en", "vi"], others=languages.EVERY)
    assert found.language == language and 0 < found.confidence <= 1
    assert len(languages.EVERY) > languages.SHORTLIST + 1
    assert len(weighed) <= 1  # one full comparison at most (none when one language is left)
    for codes in weighed:  # never of every language
        assert "en" in codes and "vi" not in codes  # vi has no analyzer
        assert len(codes) <= languages.SHORTLIST + 1


def test_without_others_every_candidate_is_weighed(monkeypatch: pytest.MonkeyPatch) -> None:
    weighed = _full_comparisons(monkeypatch)
    candidates = ("de", "en", "es", "fr", "it", "nl")
    assert len(candidates) > languages.SHORTLIST
    assert languages.detect("Welche Gerichte kocht man?", candidates).language == "de"
    assert weighed == [candidates]
    assert languages.detect("The dog sleeps", ["de"], others=["de"]) == languages.Detection(
        "de", 1.0)  # others that are candidates add nothing


def test_the_shortlist_finds_the_stated_language_of_the_xquad_slice_questions() -> None:
    """The committed xquad-r slice (en, de, es): its languages the candidates, every language
    with an analyzer the others, each question's detected language is its own (the full
    models of all 29 languages get 82 of these 83 right)."""
    path = Path(__file__).parents[1] / "data" / "xquad-r-slice" / "queries.jsonl"
    questions = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    held = sorted({q["language"] for q in questions})
    right = sum(languages.detect(q["text"], held, others=languages.EVERY).language
                == q["language"] for q in questions)
    assert right >= len(questions) - 1, right


def test_mixed_text_gets_its_dominant_language() -> None:
    text = ("Die Bundesregierung hat heute beschlossen, die Förderung der erneuerbaren "
            "Energien im kommenden Jahr deutlich zu erhöhen, sagte ein Sprecher. "
            "Green energy.")
    assert languages.detect(text, ["en", "de", "fr"]).language == "de"


def test_documents_state_or_get_detected_languages() -> None:
    found = languages_for([
        ("de", "The text is English but the document says German"),
        ("vi", "The document states a language without an analyzer"),
        (None, "The weather in the mountains was cold and the walkers went home early."),
        (None, "Das Wetter in den Bergen war kalt und die Wanderer gingen früh nach Hause."),
        (None, ""),
    ])
    assert found == ["de", None, "en", "de", None]


def test_the_detection_sample_is_the_title_and_first_texts_cut_at_the_detector_window() -> None:
    text = sample_text("Title", ["a" * 5000, "never read"])
    assert text.startswith("Title a") and len(text) == languages.DETECT_CHARACTERS
    assert sample_text(None, [None, "", "body"]) == "body"


def test_without_a_graph_or_switched_off_the_neutral_indexes_serve() -> None:
    settings = Settings()
    chosen = TextLanguages(settings, None).choose("Welche Gerichte?")
    assert chosen.indexes == (("chapters", "chapters_fulltext"), ("keywords", "keywords_fulltext"))
    assert chosen.analyzer == settings.fulltext_analyzer
    off = TextLanguages(settings.replace(fulltext_languages=False), None, "de").choose("x")
    assert off.language == "de" and off.origin == "given"
    assert off.reason == "switched off (fulltext_languages)"
    unknown = TextLanguages(settings, None, "vi").choose("x")
    assert unknown.language is None and unknown.reason == "no analyzer for 'vi'"
    assert unknown.detail()["analyzer"] == settings.fulltext_analyzer


def test_the_language_label_statement_counts_every_language_label_by_name() -> None:
    """``search_text_languages`` names each label statically (a label passed as a parameter
    is planned as a scan of every node): it must list exactly every language's Chapter and
    Keyword label and the pending label, each once."""
    text = cypher_library.load("search_text_languages")
    listed = re.findall(r"\['(\w+)', COUNT \{ \(:(\w+)\) \}\]", text)
    assert all(name == counted for name, counted in listed)
    names = [name for name, _ in listed]
    expected = {languages.label_suffix(c) + kind for c in languages.LANGUAGES
                for kind in ("Chapter", "Keyword")} | {PENDING_LABEL}
    assert len(names) == len(set(names))
    assert set(names) == expected
