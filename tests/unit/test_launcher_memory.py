"""The launcher's memory rule: neo4j-admin's table for heap and OS reserve, the page cache sized
to the store (plus a fifth, at least 2 GiB) within what the machine leaves."""

from __future__ import annotations

from pathlib import Path

import pytest

from thalabus_graph.errors import ConfigurationError
from thalabus_graph.graph.launcher.memory import (
    GIB,
    HEAP_CAP,
    MIB,
    PAGE_CACHE_FLOOR,
    format_size,
    outgrown_warning,
    parse_size,
    recommend,
    setting,
    store_size,
)


@pytest.mark.parametrize(("machine_gib", "os_gib", "heap_gib"), [
    (2, 1.0, 0.5), (4, 1.5, 2.0), (8, 2.5, 3.5), (10, 3.0, 4.0),
])
def test_os_reserve_and_heap_are_neo4j_admins_table_on_its_rows(
        machine_gib: int, os_gib: float, heap_gib: float) -> None:
    plan = recommend(machine_gib * GIB)
    assert plan.os_reserve == int(os_gib * GIB)
    assert plan.heap == int(heap_gib * GIB)


def test_between_rows_the_table_is_interpolated() -> None:
    plan = recommend(3 * GIB)  # halfway between 2 GiB (1, 0.5) and 4 GiB (1.5, 2)
    assert plan.os_reserve == int(1.25 * 1024) * MIB
    assert plan.heap == int(1.25 * 1024) * MIB


def test_the_heap_stops_at_the_cap_on_big_machines() -> None:
    assert recommend(64 * GIB).heap == HEAP_CAP
    assert recommend(1024 * GIB).heap == HEAP_CAP


def test_the_page_cache_is_sized_to_the_store_when_it_fits() -> None:
    plan = recommend(32 * GIB, store=10 * GIB)
    assert plan.page_cache == 12 * GIB
    assert plan.page_cache_size == "12g"


def test_a_small_or_new_store_gets_the_floor() -> None:
    assert recommend(32 * GIB, store=0).page_cache == PAGE_CACHE_FLOOR
    assert recommend(32 * GIB, store=100 * MIB).page_cache == PAGE_CACHE_FLOOR


def test_the_page_cache_never_takes_the_os_reserve_or_the_heap() -> None:
    for machine_gib in (1, 2, 3, 6, 12, 24, 48, 100):
        for store_gib in (0, 1, 5, 50, 500):
            plan = recommend(machine_gib * GIB, store=store_gib * GIB)
            assert plan.page_cache <= max(plan.machine - plan.os_reserve - plan.heap, 8 * MIB)
            assert plan.page_cache > 0 and plan.heap > 0
    small = recommend(2 * GIB, store=5 * GIB)  # 2 GiB - 1 GiB OS - 512 MiB heap
    assert small.page_cache == 512 * MIB


def test_sizes_parse_and_format_as_neo4j_writes_them() -> None:
    assert parse_size("512m") == 512 * MIB
    assert parse_size(" 2G ") == 2 * GIB
    assert parse_size("1048576") == MIB
    assert format_size(6 * GIB) == "6g"
    assert format_size(1536 * MIB) == "1536m"
    for bad in ("", "2x", "-1g", "0", "1.5g", "nan", "2 gb"):
        with pytest.raises(ConfigurationError, match="positive size"):
            parse_size(bad)


def test_a_bad_environment_size_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THALABUS_NEO4J_PAGE_CACHE", "lots")
    with pytest.raises(ConfigurationError, match=r"--page-cache / \$THALABUS_NEO4J_PAGE_CACHE"):
        setting(None, "THALABUS_NEO4J_PAGE_CACHE")
    assert setting("3g", "THALABUS_NEO4J_PAGE_CACHE") == "3g"  # the flag wins
    monkeypatch.setenv("THALABUS_NEO4J_PAGE_CACHE", "4g")
    assert setting(None, "THALABUS_NEO4J_PAGE_CACHE") == "4g"


def test_the_store_size_leaves_out_lucene_index_files(tmp_path: Path) -> None:
    database = tmp_path / "data" / "databases" / "neo4j"
    (database / "schema" / "index" / "range-1.0" / "3").mkdir(parents=True)
    (database / "schema" / "index" / "vector-2.0" / "4").mkdir(parents=True)
    (database / "schema" / "index" / "fulltext-1.0" / "5").mkdir(parents=True)
    (database / "neostore.nodestore.db").write_bytes(b"x" * 3000)
    (database / "schema" / "index" / "range-1.0" / "3" / "index-3").write_bytes(b"x" * 500)
    (database / "schema" / "index" / "vector-2.0" / "4" / "segment").write_bytes(b"x" * 9000)
    (database / "schema" / "index" / "fulltext-1.0" / "5" / "segment").write_bytes(b"x" * 7000)
    assert store_size(tmp_path) == 3500
    assert store_size(tmp_path / "absent") == 0


def test_a_store_beyond_its_page_cache_is_warned_about() -> None:
    assert outgrown_warning(GIB, 2 * GIB) is None
    warning = outgrown_warning(3 * GIB, 2 * GIB)
    assert warning is not None
    assert "outgrown the page cache (2g)" in warning and "store (3g)" in warning


def test_transactions_get_a_quarter_of_the_heap_and_at_least_512m() -> None:
    from thalabus_graph.graph.launcher.config import conf_text, transaction_memory_for

    assert transaction_memory_for("4g") == "1g"
    assert transaction_memory_for("1g") == "512m"
    assert transaction_memory_for("31g") == "7936m"
    assert transaction_memory_for("not-a-size") == "512m"  # the JVM reports the heap itself
    assert "dbms.memory.transaction.total.max=1g\n" in conf_text(page_cache="2g",
                                                                 transaction_memory="1g")
