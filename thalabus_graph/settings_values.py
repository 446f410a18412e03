"""How one setting's value is read, checked and shown, apart from the ``Settings`` class that
holds them all: the ``THALABUS_`` prefix of the variables, the parse of one variable's text
into the field's type, the closed range of every numeric setting, and which names and parts of
a URL are credentials a repr must hide.

Nothing here knows the fields of ``Settings``; ``thalabus_graph.settings`` calls it from
``Settings.from_env``, ``__post_init__`` and ``__repr__``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from thalabus_graph.errors import ConfigurationError

ENV_PREFIX = "THALABUS_"
"""The prefix of every variable a setting is read from (``THALABUS_TOP_N_CHAPTERS``)."""

_BIG = 1_000_000
_HUGE = 1_000_000_000
RANGES: Mapping[str, tuple[float, float]] = {
    "embedding_dimensions": (1, 4096),
    "vector_hnsw_m": (1, 512),
    "vector_hnsw_ef_construction": (1, 3200),
    "embedder_batch_size": (1, 10_000),
    "embedder_max_concurrency": (1, 1024),
    "embedder_timeout_seconds": (0.001, 86_400),
    "embedder_max_retries": (0, 100),
    "query_embedding_cache_size": (0, _HUGE),
    "top_n_chapters": (1, _BIG),
    "top_n_paragraphs": (1, _BIG),
    "top_n_summaries": (1, _BIG),
    "top_n_questions": (1, _BIG),
    "score_factor_chapters": (0, 1000),
    "score_factor_paragraphs": (0, 1000),
    "score_factor_summaries": (0, 1000),
    "score_factor_questions": (0, 1000),
    "score_cap_chapters": (0, 1000),
    "score_cap_paragraphs": (0, 1000),
    "score_cap_summaries": (0, 1000),
    "score_cap_questions": (0, 1000),
    "min_score": (0, 1),
    "short_query_max_words": (0, _BIG),
    "fusion_text_weight": (0, 1),
    "fusion_full_coverage": (0, 1),
    "rrf_k": (0, _BIG),
    "exact_search_max_candidates": (0, _HUGE),
    "text_lookup_max_fragments": (0, _HUGE),
    "vector_overfetch_factor": (1, 1000),
    "vector_k_factor": (1, 1000),
    "vector_min_k": (1, _BIG),
    "index_max_k": (1, _BIG),
    "top_n_text": (1, _BIG),
    "min_reranking_score_doc": (0, 1),
    "max_fragments_per_doc": (1, _BIG),
    "max_rag_output_frag": (1, _BIG),
    "limit_pool_factor": (1, 1000),
    "limit_min_k": (1, _BIG),
    "limit_k_factor": (1, 1000),
    "reranker_batch_size": (1, 10_000),
    "reranker_timeout_seconds": (0.001, 86_400),
    "reranker_max_retries": (0, 100),
    "max_parallelism": (1, 1024),
    "service_max_reply_bytes": (1, _HUGE),
    "max_rerank_chars": (1, _HUGE),
    "max_reranking_input_frag": (1, _BIG),
    "min_reranking_score_frag": (-_HUGE, _HUGE),
    "max_reranking_output_frag": (1, _BIG),
    "min_reranking_output_frag": (0, _BIG),
    "min_reranking_output_doc": (0, _BIG),
    "max_reranking_output_doc": (0, _BIG),
    "max_rag_message_length": (1, _HUGE),
    "max_loaded_document_length": (0, _HUGE),
    "write_batch_size": (1, _BIG),
    "max_result_text_chars": (1, _HUGE),
    "max_concurrent_queries": (1, 10_000),
    "max_query_chars": (1, _HUGE),
    "max_query_terms": (1, _BIG),
    "max_query_depth": (1, _BIG),
    "max_phrase_chars": (1, _HUGE),
    "max_passage_chars": (1, _HUGE),
    "query_timeout_seconds": (0.001, 86_400),
    "embedding_window_chars": (100, _BIG),
    "embedding_max_windows": (1, 1000),
}
"""The closed range of every numeric setting; a value outside it, NaN or an infinity is a
``ConfigurationError`` naming the setting (``tests/adversarial/test_settings_ranges.py`` checks
that every numeric field has one). Thresholds on the retrieval scale lie in [0, 1]; reranker
scores are uncalibrated (logits may be negative), so their threshold only has to be finite."""


def check_range(name: str, value: Any, low: float, high: float) -> None:
    """Refuse a value of the wrong type, NaN, an infinity or one outside ``[low, high]``."""
    env = f"{ENV_PREFIX}{name.upper()}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigurationError(f"{name} ({env}) must be a number, not {value!r}")
    if not math.isfinite(value):
        raise ConfigurationError(f"{name} ({env}) must be a finite number, not {value!r}")
    if not low <= value <= high:
        raise ConfigurationError(
            f"{name} ({env}) must lie in [{_shown(low)}, {_shown(high)}], not {value!r}")


def _shown(bound: float) -> str:
    return f"{bound:,}".replace(",", "_") if float(bound).is_integer() else f"{bound:g}"


SECRET_NAME_PARTS = ("api_key", "token", "password", "secret")
USER_INFO = re.compile(r"(?<=://)[^/\s@]+@")
"""The user info of a URL (``user:password@``), never shown in a repr."""


def without_user_info(url: str) -> str:
    """``url`` with its user info (``user:password@``) shown as ``***@``."""
    return USER_INFO.sub("***@", url)


def is_secret(name: str) -> bool:
    """True for a field whose value is a credential."""
    return any(part in name for part in SECRET_NAME_PARTS)


def coerce(name: str, raw: str, kind: type) -> Any:
    """The text ``raw`` of setting ``name``'s variable as a ``kind`` (a bool from 1 / true / yes
    / on or 0 / false / no / off / empty); other text is a ``ConfigurationError`` naming it."""
    try:
        if kind is bool:
            low = raw.strip().lower()
            if low in ("1", "true", "yes", "on"):
                return True
            if low in ("0", "false", "no", "off", ""):
                return False
            raise ValueError(raw)
        return kind(raw)
    except ValueError as exc:
        raise ConfigurationError(
            f"{ENV_PREFIX}{name.upper()}={raw!r} is not a valid {kind.__name__}"
        ) from exc
