"""The pools of a query that asks for ``limit`` results (``plan.cost.sized``): every per-source
and text pool and the vector index's least ``k`` follow from the limit by one rule, never
above the configured ones; without a limit nothing changes; bad limits are errors."""

from __future__ import annotations

import math

import pytest

from thalabus_graph import Settings, parse
from thalabus_graph.errors import ConfigurationError
from thalabus_graph.plan import cost
from thalabus_graph.plan.steps import VECTOR_SOURCES


def test_without_a_limit_the_configured_pools_stay() -> None:
    settings = Settings()
    assert cost.sized(settings, None) is settings
    assert settings.top_n_chapters == 200 and settings.top_n_text == 200


@pytest.mark.parametrize("limit", [1, 3, 10, 25])
def test_every_pool_is_the_limit_times_the_factor(limit: int) -> None:
    settings = Settings(limit_pool_factor=3.5, limit_min_k=150)
    sized = cost.sized(settings, limit)
    pool = math.ceil(limit * 3.5)
    for name in cost.pool_fields(settings):
        assert getattr(sized, name) == min(getattr(settings, name), pool), name
    assert sized.vector_min_k == 150
    assert sized.vector_k_factor == settings.limit_k_factor < settings.vector_k_factor
    # the rest of the settings is untouched
    assert sized.replace(**{n: getattr(settings, n) for n in cost.pool_fields(settings)},
                         vector_min_k=settings.vector_min_k,
                         vector_k_factor=settings.vector_k_factor) == settings


def test_the_index_factor_is_never_raised_by_a_limit() -> None:
    settings = Settings(vector_k_factor=2.0, limit_k_factor=3.0)
    assert cost.sized(settings, 10).vector_k_factor == 2.0


def test_pool_fields_are_every_source_and_the_text_pool() -> None:
    names = set(cost.pool_fields(Settings()))
    assert {f"top_n_{src.source}" for src in VECTOR_SOURCES} | {"top_n_text"} <= names
    assert all(name.startswith("top_n_") for name in names)


def test_pools_never_exceed_the_configured_ones_and_grow_with_the_limit() -> None:
    settings = Settings(top_n_chapters=50, vector_min_k=100, limit_min_k=400)
    previous: dict[str, int] = {}
    for limit in (1, 2, 5, 10, 20, 50, 100, 1000, settings.index_max_k):
        pools = cost.pools(cost.sized(settings, limit))
        assert pools["chapters"] <= 50 and pools["vector_min_k"] == 100
        for name, n in pools.items():
            assert n >= previous.get(name, 0)
        previous = pools
    assert previous == cost.pools(settings)  # a huge limit: the configured pools


@pytest.mark.parametrize("limit_min_k", [100, Settings().limit_min_k])
def test_the_unfiltered_k_is_sized_with_the_pool(limit_min_k: int) -> None:
    # 100: a small corpus's setting, below VECTOR_MIN_K; the default keeps the recall floor
    settings = Settings(limit_min_k=limit_min_k)
    sized = cost.sized(settings, 10)
    for src in VECTOR_SOURCES:
        top_n = cost.top_n(sized, src)
        k = cost.unfiltered_k(sized, top_n)
        full = cost.unfiltered_k(settings, cost.top_n(settings, src))
        assert top_n <= k <= full  # never more than the seed's pools ask for
        assert k == max(math.ceil(top_n * settings.limit_k_factor),
                        min(limit_min_k, settings.vector_min_k))
        if limit_min_k < settings.vector_min_k:
            assert k < full


def test_a_limited_query_keeps_the_seed_s_index_floor_by_default() -> None:
    settings = Settings()
    assert cost.sized(settings, 10).vector_min_k == settings.vector_min_k


@pytest.mark.parametrize("bad", [0, -1, -10, 10**12, 1.5, True, "10"])
def test_a_bad_limit_is_a_clear_error(bad: object) -> None:
    with pytest.raises(ConfigurationError, match="limit must be"):
        cost.sized(Settings(), bad)  # type: ignore[arg-type]


def test_the_largest_limit_is_the_index_cap() -> None:
    settings = Settings(index_max_k=500)
    assert cost.check_limit(500, settings) == 500
    with pytest.raises(ConfigurationError, match="between 1 and 500"):
        cost.check_limit(501, settings)


@pytest.mark.parametrize(("query", "sizes"), [
    ('"a"', True), ("'t'", True), ('"a" AND X=1', True), ('"a" OR "b"', True),
    ('("a" OR "b") AND X=1 AND NOT Y=2', True), ('X=1', True), ("", True),
    ('("a" AND X=1) OR \'t\'', True),
    ('"a" AND "b"', False), ("'t' AND 'u'", False), ('"a" AND NOT "b"', False),
    ('NOT "a"', False), ('("a" OR "b") AND "c"', False), ('"a" OR ("b" AND NOT \'t\')', False),
])
def test_a_limit_sizes_only_pools_whose_best_results_are_the_answers(
        query: str, sizes: bool) -> None:
    assert cost.limit_sizes_pools(parse(query)) is sizes


def test_a_deep_query_is_judged_without_recursion() -> None:
    deep = parse(" AND ".join(['"a"'] + [f"X={i}" for i in range(5_000)]))
    assert cost.limit_sizes_pools(deep) is True
