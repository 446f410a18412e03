"""An unfiltered phrase in one round trip (``search_phrase``): its vector searches and, when
asked, its bag-of-words text searches, with the node counts, the documents' languages and,
when the caller returns documents, their details. Several phrases' calls can be started at
once (``PhraseSearches.prefetch``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from thalabus_graph import lucene
from thalabus_graph.fragments import Fragment, sort_fragments
from thalabus_graph.plan import cost
from thalabus_graph.plan.steps import (
    TEXT_INDEX,
    TEXT_SOURCES,
    VECTOR_BY_SOURCE,
    VECTOR_SOURCES,
    Step,
)
from thalabus_graph.scoring.scale import Candidate
from thalabus_graph.search.fusing import Fragments
from thalabus_graph.search.hits import Hit, semantic_fragments, stored_language, text_fragments
from thalabus_graph.search.languages import TextLanguage
from thalabus_graph.search.runner import PHRASE_KEY, Runner
from thalabus_graph.search.scope import ScopeReads
from thalabus_graph.settings import Settings


class PhraseSearches:
    """The ``search_phrase`` calls of one evaluation.

    Args:
        vector: the phrase's query embedding (computed once per phrase).
        background: the best candidates per search a phrase's fusion is fitted on and its
            calibrated background reads (``scale.BACKGROUND_TOP_N``; 0: none); a call keeping
            fewer (a pool sized to a limit) also returns those beyond its pool, kept in
            ``beyond`` (phrase -> its vector candidates there, ``scale.Candidate``) and in
            ``sampled`` (phrase -> its fixed sample: the best ``background`` semantic
            fragments of each vector source and text fragments of each text search, the
            pool's and those beyond it alike, whatever the request keeps).

    ``stored_models``: the embedding models whose vectors ingest stored (the call's size row;
    None until a call returned it).
        best: the text normalisation divisors, which an unrestricted call gives itself.
        languages: the documents' stored languages, which every call returns.
    """

    def __init__(self, runner: Runner, reads: ScopeReads, settings: Settings,
                 vector: Callable[[str], list[float]], *, details: bool,
                 best: dict[tuple[str, str, str | None], float],
                 languages: dict[str, str | None],
                 text_language: Callable[[str], TextLanguage] | None = None,
                 background: int = 0) -> None:
        self.runner = runner
        self.background = background
        self.beyond: dict[str, list[Candidate]] = {}
        self.sampled: dict[str, Fragments] = {}
        self.stored_models: tuple[str, ...] | None = None
        self.reads = reads
        self.settings = settings
        self.vector = vector
        self.details = details
        self.best = best
        self.languages = languages
        self.text_language = text_language

    def text_indexes(self, phrase: str) -> tuple[tuple[str, str], ...]:
        """(source, index) of the phrase's text searches: its language's (``TextLanguages``)."""
        if self.text_language is None:
            return TEXT_SOURCES
        return self.text_language(phrase).indexes

    def probing(self) -> bool:
        """Whether the ontology's size is still unknown (the call then probes it)."""
        scope = self.reads.value
        return scope.ontologyid is not None and scope.documents is None

    def fragments(self, phrase: str, *, with_text: bool) -> Fragments:
        """The phrase's semantic fragments and (when ``with_text``) its bag-of-words text
        fragments, from one ``search_phrase`` call.

        The call also returns the node counts (kept for the rest of the evaluation), and
        skips the searches of sources that hold no fragments; those steps say so. Each source
        is still a ``Step`` with its own rows; the call's time (and db hits) are reported on
        its first step, the others name the call in ``round_trip``. Text scores are divided by
        each index's best hit, which this unrestricted search returns itself, so no
        normalisation query is needed.
        """
        covered, query = self._steps(phrase, with_text=with_text)
        steps = list(covered.values())
        probing = self.probing()
        rows = self.runner.take(steps[0], PHRASE_KEY)  # a batched call read them (search.batch)
        if rows is None:
            ahead = self.runner.prefetched.pop(("search_phrase", phrase, with_text), None)
            params = {} if ahead is not None else self.params(phrase, with_text=with_text)
            rows = self.runner.read(steps[0], "search_phrase", plain=True, ahead=ahead,
                                    **params)
        self.runner.share_call(steps, steps[0].cypher)
        grouped: dict[tuple[str, str], list[Hit]] = {key: [] for key in covered}
        sizes: dict[str, int] = {}
        beyond: list[Candidate] = []
        beyond_hits: dict[str, list[Hit]] = {}
        for row in rows:
            columns = (row["fragmentids"], row["documentids"], row["texts"], row["scores"])
            if row["kind"] != "size":  # the size row lists no documents: see the statement
                self.languages.update(zip(row["documentids"],
                                          map(stored_language, row["languages"]),
                                          strict=True))
            self.runner.details.update((entry[0], entry) for entry in row["details"])
            if row["kind"] == "size":
                self.stored_models = tuple(str(m) for m in row["documentids"])
                sizes = {name: int(n) for name, n in zip(columns[0], columns[3], strict=True)}
                ontology_size = sizes.pop("ontology", 0)
                if probing:
                    self.reads.learn(sizes, ontology_size)
            elif row["kind"] == "background":
                beyond += [Candidate(str(row["source"]), float(score), text,
                                     stored_language(language))
                           for text, score, language in zip(row["texts"], row["scores"],
                                                            row["languages"], strict=True)]
                beyond_hits[row["source"]] = list(zip(*columns, strict=True))
            else:
                grouped[row["kind"], row["source"]] = list(zip(*columns, strict=True))
        self.beyond[phrase] = beyond
        self.reads.learn(sizes)
        if probing and self.reads.sized().ontology_pattern() is not None:
            for step in steps:
                step.detail.update(path="skipped", reason="the ontology holds part of the "
                                   "documents: searched again with its pattern")
            return [], []
        found = self._split(grouped, covered, sizes, query,
                            dict(self.text_indexes(phrase)) if query else None)
        if self.background:
            self.sampled[phrase] = self._sample(grouped, beyond_hits, sizes, found)
        return found[0], found[1]

    def _steps(self, phrase: str, *, with_text: bool
               ) -> tuple[dict[tuple[str, str], Step], str]:
        """The steps of one ``search_phrase`` call (a semantic step per source, a text step
        per index of the phrase's language when ``with_text``) and its Lucene query ("" when
        without text)."""
        covered: dict[tuple[str, str], Step] = {}
        for src in VECTOR_SOURCES:
            top_n = cost.top_n(self.settings, src)
            step = self.runner.step("semantic", {"phrase": phrase, "source": src.source,
                                                 "top_n": top_n})
            step.detail.update(path="index", reason="no filter",
                               k=cost.unfiltered_k(self.settings, top_n))
            covered["semantic", src.source] = step
        query = lucene.terms_query(phrase) if with_text else ""
        for source, index in self.text_indexes(phrase) if query else ():
            covered["text", source] = self.runner.step(
                "text", {"term": phrase, "index": index, "lucene": query,
                         "case_sensitive": False, "k": self.settings.top_n_text,
                         **(self.text_language(phrase).detail() if self.text_language
                            else {})})
        return covered, query

    def _sample(self, grouped: dict[tuple[str, str], list[Hit]],
                beyond: dict[str, list[Hit]], sizes: dict[str, int],
                found: tuple[list[Fragment], list[Fragment], list[Fragment]]) -> Fragments:
        """The phrase's fixed sample (``sampled``): the best ``background`` semantic
        fragments of each vector source, its pool's and ``beyond`` it, and the text fragments
        of its text searches (``found``: the split's semantic, text and sampled text)."""
        semantic: list[Fragment] = []
        for src in VECTOR_SOURCES:
            if ("semantic", src.source) in grouped and sizes.get(src.source, 0):
                hits = [*grouped["semantic", src.source], *beyond.get(src.source, ())]
                semantic += semantic_fragments(self.settings, src, hits[:self.background])
        return sort_fragments(semantic), found[2]

    def _split(self, grouped: dict[tuple[str, str], list[Hit]],
               covered: dict[tuple[str, str], Step], sizes: dict[str, int],
               query: str, indexes: dict[str, str] | None = None
               ) -> tuple[list[Fragment], list[Fragment], list[Fragment]]:
        """The call's semantic and text fragments as the request keeps them, and its text
        fragments up to the fixed sample's size (``background``) for the fusion's fit."""
        semantic: list[Fragment] = []
        text: list[Fragment] = []
        sampled: list[Fragment] = []
        for (kind, source), hits in grouped.items():
            step = covered[kind, source]
            step.rows = len(hits)
            if not sizes.get(source, 0):
                step.detail.update(path="skipped", reason=f"no {source} in the graph")
            elif kind == "semantic":
                semantic += semantic_fragments(self.settings, VECTOR_BY_SOURCE[source], hits)
            else:
                hits.sort(key=lambda h: (-h[3], h[0]))
                best = float(hits[0][3]) if hits else 0.0
                self.best[(indexes or TEXT_INDEX)[source], query, None] = best
                text += text_fragments(self.settings, source, hits, best)
                sampled += text_fragments(self.settings, source, hits, best,
                                          max(self.settings.top_n_text, self.background))
        return sort_fragments(semantic), text, sampled

    def params(self, phrase: str, *, with_text: bool) -> dict[str, Any]:
        """The parameters of one phrase's ``search_phrase`` call: every vector index (and,
        ``with_text``, every full-text index) whose source is not known to be empty."""
        known = self.reads.value.counts
        vector_searches: list[dict[str, Any]] = []
        for src in VECTOR_SOURCES:
            top_n = cost.top_n(self.settings, src)
            background = self.background if self.background > top_n else 0
            vector_searches.append({"source": src.source, "index": src.index,
                                    "k": max(cost.unfiltered_k(self.settings, top_n),
                                             background),
                                    "top_n": top_n, "background": background})
        query = lucene.terms_query(phrase) if with_text else ""
        text_searches: list[dict[str, Any]] = [
            {"source": source, "index": index, "query": query,
             "k": max(self.settings.top_n_text, self.background)}
            for source, index in (self.text_indexes(phrase) if query else ())]
        if known is not None:  # a later phrase of the query: leave out what is known empty
            vector_searches = [v for v in vector_searches if known.get(v["source"], 0)]
            text_searches = [t for t in text_searches if known.get(t["source"], 0)]
        return {"vector": self.vector(phrase), "vector_searches": vector_searches,
                "text_searches": text_searches, "rescore": self.settings.vector_quantization,
                "ontologyid": self.reads.value.ontologyid if self.probing() else None,
                "details": self.details}

    def prefetch(self, phrases: Sequence[tuple[str, bool]]) -> None:
        """Start the ``search_phrase`` calls of several unfiltered phrases at once, each in
        its own session (``(phrase, with_text)`` pairs, as ``fragments`` will ask for them):
        an OR of two phrases waits for the slower index call instead of the sum of both.
        Each call's parameters are the ones the run would send, except that without known
        node counts every source is searched (an empty index answers at once, and each call
        returns the counts that mark its empty sources skipped). Not while an ontology's size
        is unknown (the first call then probes it). The query vectors are computed here, one
        by one, before any call starts."""
        wanted = list(dict.fromkeys(phrases))
        if len(wanted) < 2 or self.probing():
            return
        calls = [(key, self.params(key[0], with_text=key[1])) for key in wanted]
        self.runner.prefetch("search_phrase", calls)
