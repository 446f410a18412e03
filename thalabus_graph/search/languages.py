"""Which full-text indexes a phrase's bag-of-words text search runs on: those of the phrase's
language (given by the caller, or detected among the languages the graph holds), or the
language-neutral ones (docs/architecture.md, "Text search by language").

``TextLanguageState`` reads, at most once per ``recheck_seconds``, which languages the graph
holds (the language labels some node carries, one label probe each), whether documents still
wait for the backfill (``TextLanguagePending``) and which per-language indexes are ONLINE.
``TextLanguages`` chooses per phrase, once per evaluation, so explain, the unfiltered
``search_phrase`` call and the filtered text searches of one phrase agree.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Literal

from thalabus_graph import languages
from thalabus_graph.graph.database import Database
from thalabus_graph.plan.steps import TEXT_SOURCES
from thalabus_graph.search.runner import Runner
from thalabus_graph.settings import Settings

Origin = Literal["given", "detected", "none"]
PENDING_LABEL = "TextLanguagePending"


@dataclass(frozen=True)
class GraphLanguages:
    """What the graph offers the per-language text search.

    Attributes:
        languages: ISO 639-1 codes whose chapters or keywords exist and whose indexes are
            ONLINE (the detector's candidates).
        online: the codes whose two per-language indexes are ONLINE.
        why_not: why no per-language index serves (None when they do).
    """

    languages: frozenset[str]
    online: frozenset[str]
    why_not: str | None = None


@dataclass(frozen=True)
class TextLanguage:
    """A phrase's text language and the indexes its bag-of-words search runs on.

    Attributes:
        language: the phrase's ISO 639-1 code (None: not given and not detected).
        origin: ``given`` by the caller, ``detected``, or ``none``.
        analyzer: the analyzer of the searched indexes.
        indexes: (source, index) of each searched full-text index.
        reason: why the language-neutral indexes are searched (None when they are not).
        confidence: the detector's confidence (None unless detected).
    """

    language: str | None
    origin: Origin
    analyzer: str
    indexes: tuple[tuple[str, str], ...]
    reason: str | None = None
    confidence: float | None = None

    def detail(self) -> dict[str, Any]:
        """What explain and profile show on the phrase's text steps."""
        out: dict[str, Any] = {"analyzer": self.analyzer, "language": self.language,
                               "language_from": self.origin}
        if self.confidence is not None:
            out["language_confidence"] = round(self.confidence, 3)
        if self.reason is not None:
            out["analyzer_reason"] = self.reason
        return out


class TextLanguageState:
    """The graph's languages for the per-language text search, read at most once per
    ``recheck_seconds`` (a migration, a backfill or an ingest of a new language is seen at
    the next read)."""

    def __init__(self, db: Database, recheck_seconds: float) -> None:
        self.db = db
        self.recheck_seconds = recheck_seconds
        self._read: tuple[float, GraphLanguages] | None = None

    def forget(self) -> None:
        """Read again at the next search (after a migration, backfill or ingest)."""
        self._read = None

    def state(self) -> GraphLanguages:
        """The graph's languages as last read."""
        now = time.monotonic()
        if self._read is None or now - self._read[0] > self.recheck_seconds:
            self._read = (now, self._graph())
        return self._read[1]

    def _graph(self) -> GraphLanguages:
        codes = sorted(languages.LANGUAGES)
        labels = {languages.label_suffix(c) + kind: c for c in codes
                  for kind in ("Chapter", "Keyword")}
        runner = Runner(self.db)
        used = {r["label"] for r in runner.alone("search_text_languages", {})}
        names = {languages.index_of(c, source): c for c in codes for source, _ in TEXT_SOURCES}
        ready = {r["name"] for r in runner.alone("search_fulltext_indexes",
                                                 {"names": list(names)})}
        online = frozenset(c for c in codes
                           if all(languages.index_of(c, s) in ready for s, _ in TEXT_SOURCES))
        held = frozenset(labels[label] for label in used if label in labels) & online
        if not online:
            return GraphLanguages(held, online, "no per-language full-text index is ONLINE "
                                  "(migration V0009 builds them)")
        if PENDING_LABEL in used:
            return GraphLanguages(held, online, "documents ingested before migration V0009 "
                                  "await their language labels (thalabus-graph migrate)")
        return GraphLanguages(held, online)


class TextLanguages:
    """The text language of each phrase of one evaluation (chosen once per phrase).

    Args:
        settings: ``fulltext_languages`` switches the per-language search on,
            ``fulltext_analyzer`` names the neutral indexes' analyzer.
        state: the graph's languages (read lazily, at the first fused phrase).
        given: the caller's language for every phrase (None: detect each).
    """

    def __init__(self, settings: Settings, state: TextLanguageState | None,
                 given: str | None = None) -> None:
        self.settings = settings
        self.state = state
        self.given = languages.checked_language(given)
        self._chosen: dict[str, TextLanguage] = {}
        self._held: dict[str, bool | None] = {}

    def choose(self, phrase: str) -> TextLanguage:
        """The phrase's text language and indexes."""
        if phrase not in self._chosen:
            self._chosen[phrase] = self._choose(phrase)
        return self._chosen[phrase]

    def held(self, phrase: str) -> bool | None:
        """Whether the phrase is in a language the graph's text holds (the calibration's
        phrase gate reads its words only then): the caller's language, else the one lingua
        detects among every language with an analyzer (none detected: not held). None when
        the graph's languages are not known (no per-language index serves, or documents
        await their labels)."""
        if phrase not in self._held:
            self._held[phrase] = self._is_held(phrase)
        return self._held[phrase]

    def _is_held(self, phrase: str) -> bool | None:
        if self.state is None:
            return None
        graph = self.state.state()
        if graph.why_not is not None or not graph.languages:
            return None
        code = (languages.language_of(self.given) if self.given
                else languages.detect(phrase, sorted(graph.languages),
                                      others=languages.EVERY).language)
        return code in graph.languages

    def _neutral(self, language: str | None, origin: Origin, reason: str,
                 confidence: float | None = None) -> TextLanguage:
        return TextLanguage(language, origin, self.settings.fulltext_analyzer,
                            TEXT_SOURCES, reason, confidence)

    def _choose(self, phrase: str) -> TextLanguage:
        given = languages.language_of(self.given)
        if self.given and given is None:
            return self._neutral(None, "given", f"no analyzer for {self.given!r}")
        if not self.settings.fulltext_languages:
            return self._neutral(given, "given" if given else "none",
                                 "switched off (fulltext_languages)")
        if self.state is None:
            return self._neutral(given, "given" if given else "none", "no graph state")
        graph = self.state.state()
        if graph.why_not is not None:
            return self._neutral(given, "given" if given else "none", graph.why_not)
        if given is not None:
            return self._indexed(given, "given", graph, None)
        found = languages.detect(phrase, sorted(graph.languages))
        if found.language is None:
            reason = ("the graph holds no text in a language with an analyzer"
                      if not graph.languages else "no language detected")
            return self._neutral(None, "none", reason)
        return self._indexed(found.language, "detected", graph, found.confidence)

    def _indexed(self, code: str, origin: Origin, graph: GraphLanguages,
                 confidence: float | None) -> TextLanguage:
        if code not in graph.online:
            return self._neutral(code, origin, f"the {languages.LANGUAGES[code]} indexes are "
                                 "not ONLINE", confidence)
        return TextLanguage(code, origin, languages.LANGUAGES[code],
                            tuple((source, languages.index_of(code, source))
                                  for source, _ in TEXT_SOURCES), None, confidence)
