"""Unit tests of the migration runner's pure parts: splitting, discovery, checksum, analyze."""

from __future__ import annotations

from pathlib import Path

import pytest

from thalabus_graph.errors import ChecksumMismatch, ConfigurationError, MigrationError
from thalabus_graph.graph.migrations import (
    STATE_APPLIED,
    STATE_CHANGED,
    STATE_OUT_OF_ORDER,
    STATE_PENDING,
    STATE_SETTINGS_CHANGED,
    STATE_UNKNOWN,
    STATE_WAITING,
    AppliedMigration,
    Migration,
    SettingsMismatch,
    analyze,
    discover,
    placeholder_values,
    server_line,
    split_statements,
    status_rows,
    substitute,
)
from thalabus_graph.settings import Settings

REPO_MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


def texts(source: str) -> list[str]:
    return [s.text for s in split_statements(source)]


# -- splitting -----------------------------------------------------------------------------


def test_split_on_semicolon_at_line_end() -> None:
    assert texts("RETURN 1;\nRETURN 2;\n") == ["RETURN 1", "RETURN 2"]


def test_last_statement_without_semicolon_is_kept() -> None:
    assert texts("RETURN 1;\nRETURN 2") == ["RETURN 1", "RETURN 2"]


def test_semicolon_inside_strings_does_not_split() -> None:
    source = "RETURN 'a;\nb';\nRETURN \"c;\";\nRETURN `we;\nird`;\n"
    assert texts(source) == ["RETURN 'a;\nb'", 'RETURN "c;"', "RETURN `we;\nird`"]


def test_escaped_quotes_inside_strings() -> None:
    source = "RETURN 'it\\'s;\n';\nRETURN \"say \\\"hi\\\";\n\";\nRETURN `a``;\n`"
    assert texts(source) == ["RETURN 'it\\'s;\n'", 'RETURN "say \\"hi\\";\n"', "RETURN `a``;\n`"]


def test_semicolon_in_the_middle_of_a_line_does_not_split() -> None:
    assert texts("RETURN 1; RETURN 2;\n") == ["RETURN 1; RETURN 2"]


def test_comments_are_dropped_and_do_not_split() -> None:
    source = (
        "// header; with a semicolon;\n"
        "CREATE INDEX a IF NOT EXISTS // trailing; comment;\n"
        "FOR (n:A) ON (n.x); // after the separator\n"
        "/* block;\n comment; */ RETURN 'http://x;y';\n"
        "// only a comment at the end\n"
    )
    assert texts(source) == [
        "CREATE INDEX a IF NOT EXISTS\nFOR (n:A) ON (n.x)",
        "RETURN 'http://x;y'",
    ]


def test_quotes_inside_comments_are_ignored() -> None:
    assert texts("// don't\nRETURN 1;\n/* it's */\nRETURN 2") == ["RETURN 1", "RETURN 2"]


def test_empty_statements_and_blank_lines_are_dropped() -> None:
    assert texts(";\n\n  ;\n\nRETURN 1;\n;\n") == ["RETURN 1"]
    assert texts("") == []
    assert texts("// nothing\n") == []


def test_statement_line_numbers_and_first_line() -> None:
    statements = split_statements("// c\n\nCREATE X\nFOO;\n\n  RETURN 2;\n")
    assert [(s.line, s.first_line) for s in statements] == [(3, "CREATE X"), (6, "RETURN 2")]


def test_crlf_line_endings() -> None:
    assert texts("RETURN 1;\r\nRETURN 2;\r\n") == ["RETURN 1", "RETURN 2"]


def test_unterminated_string_is_an_error() -> None:
    with pytest.raises(MigrationError, match="unterminated"):
        split_statements("RETURN 'oops;\n")


# -- placeholders ----------------------------------------------------------------------------


def test_placeholder_values_come_from_settings() -> None:
    values = placeholder_values(Settings(embedding_dimensions=768, vector_similarity="euclidean",
                                         fulltext_analyzer="english", vector_quantization=True,
                                         vector_hnsw_m=48, vector_hnsw_ef_construction=400))
    assert values == {"EMBEDDING_DIMENSIONS": "768", "VECTOR_SIMILARITY": "euclidean",
                      "FULLTEXT_ANALYZER": "english", "VECTOR_QUANTIZATION": "true",
                      "VECTOR_HNSW_M": "48", "VECTOR_HNSW_EF_CONSTRUCTION": "400"}
    assert placeholder_values(Settings())["VECTOR_QUANTIZATION"] == "false"


@pytest.mark.parametrize("changes", [
    {"vector_hnsw_m": 0}, {"vector_hnsw_m": 513}, {"vector_hnsw_ef_construction": 0},
    {"vector_hnsw_ef_construction": 3201},
])
def test_hnsw_settings_outside_neo4j_bounds_are_refused(changes: dict[str, int]) -> None:
    with pytest.raises(ConfigurationError, match="vector_hnsw"):
        Settings(**changes)  # type: ignore[arg-type]


def test_hnsw_placeholders_refuse_non_integers() -> None:
    # replace() runs the same checks, so a bypass (object.__setattr__) stands for a bad value
    # arriving by another route; the placeholder check must still refuse to paste it.
    bad = Settings()
    object.__setattr__(bad, "vector_hnsw_m", "16}}) MATCH (n) DETACH DELETE n //")
    with pytest.raises(ConfigurationError, match="vector_hnsw_m"):
        placeholder_values(bad)


@pytest.mark.parametrize("changes", [
    {"vector_similarity": "dot'}) MATCH (n) DETACH DELETE n //"},
    {"fulltext_analyzer": "english', x: '"},
])
def test_placeholder_values_reject_anything_but_plain_names(changes: dict[str, str]) -> None:
    with pytest.raises(ConfigurationError):
        placeholder_values(Settings().replace(**changes))


def test_substitute_and_unknown_placeholder() -> None:
    assert substitute("a {{X}} b {{ X }}", {"X": "1"}) == "a 1 b 1"
    with pytest.raises(MigrationError, match=r"V9__x.cypher: unknown placeholder \{\{Y\}\}"):
        substitute("{{Y}}", {"X": "1"}, where="V9__x.cypher")


# -- discovery and checksum ------------------------------------------------------------------


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_discovery_sorts_numerically_and_parses(tmp_path: Path) -> None:
    write(tmp_path, "V10__ten.cypher", "RETURN 10")
    write(tmp_path, "V2__two_words.cypher", "RETURN {{EMBEDDING_DIMENSIONS}};\nRETURN 2")
    write(tmp_path, "V0001__one.cypher", "RETURN 1")
    write(tmp_path, "README.md", "not a migration")
    found = discover(tmp_path)
    assert [(m.version, m.description) for m in found] == [(1, "one"), (2, "two words"),
                                                           (10, "ten")]
    assert found[1].placeholders == ("EMBEDDING_DIMENSIONS",)
    assert found[1].render({"EMBEDDING_DIMENSIONS": "8"}) == ["RETURN 8", "RETURN 2"]


def test_duplicate_versions_are_rejected(tmp_path: Path) -> None:
    write(tmp_path, "V1__a.cypher", "RETURN 1")
    write(tmp_path, "V0001__b.cypher", "RETURN 1")
    with pytest.raises(MigrationError, match="duplicate migration version 1"):
        discover(tmp_path)


def test_misnamed_cypher_file_is_rejected(tmp_path: Path) -> None:
    write(tmp_path, "V1_a.cypher", "RETURN 1")
    with pytest.raises(MigrationError, match=r"V1_a\.cypher"):
        discover(tmp_path)


def test_missing_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(MigrationError, match="does not exist"):
        discover(tmp_path / "nope")


def test_discovery_uses_migrations_dir_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    write(tmp_path, "V7__seven.cypher", "RETURN 7")
    monkeypatch.setenv("THALABUS_MIGRATIONS_DIR", str(tmp_path))
    assert [m.version for m in discover()] == [7]


def migration(text: str, version: int = 1) -> Migration:
    return Migration.from_text(version, "x", Path(f"V{version}__x.cypher"), text)


def test_checksum_ignores_comments_whitespace_and_line_endings() -> None:
    base = migration("CREATE INDEX a FOR (n:A) ON (n.x);\nRETURN 1\n").checksum
    same = [
        "// a new comment\nCREATE INDEX a FOR (n:A) ON (n.x);   \r\n\r\nRETURN 1;\n",
        "CREATE INDEX a FOR (n:A) ON (n.x); /* note */\nRETURN 1",
    ]
    for text in same:
        assert migration(text).checksum == base
    assert migration("CREATE INDEX b FOR (n:A) ON (n.x);\nRETURN 1").checksum != base
    assert migration("CREATE INDEX a FOR (n:A) ON (n.x)").checksum != base


def test_checksum_is_taken_before_substitution() -> None:
    m = migration("RETURN {{EMBEDDING_DIMENSIONS}}")
    assert m.checksum == migration("RETURN {{EMBEDDING_DIMENSIONS}}").checksum
    assert m.checksum != migration("RETURN 384").checksum
    assert m.checksum.isdigit() and 0 <= int(m.checksum) < 2**32


def test_repository_migrations_parse_and_use_known_placeholders() -> None:
    found = discover(REPO_MIGRATIONS)
    assert [m.version for m in found][:3] == [1, 2, 3]
    values = placeholder_values(Settings())
    for m in found:
        for text in m.render(values):
            assert "{{" not in text
            assert "IF NOT EXISTS" in text or not text.startswith("CREATE")
    assert found[1].placeholders == ("EMBEDDING_DIMENSIONS", "VECTOR_QUANTIZATION",
                                     "VECTOR_SIMILARITY")
    assert found[2].placeholders == ("FULLTEXT_ANALYZER",)
    v5 = next(m for m in found if m.version == 5)
    assert v5.placeholders == ("EMBEDDING_DIMENSIONS", "VECTOR_HNSW_EF_CONSTRUCTION",
                               "VECTOR_HNSW_M", "VECTOR_QUANTIZATION", "VECTOR_SIMILARITY")
    rendered = v5.render(values)
    # Each vector index is dropped (if there) and created again with the HNSW options.
    assert [t.split("\n")[0] for t in rendered[::2]] == [
        "DROP INDEX typical_rag IF EXISTS", "DROP INDEX paragraphs IF EXISTS",
        "DROP INDEX summaries IF EXISTS"]
    for text in rendered[1::2]:
        assert f"`vector.hnsw.m`: {Settings().vector_hnsw_m}" in text
        assert (f"`vector.hnsw.ef_construction`: {Settings().vector_hnsw_ef_construction}"
                in text)


# -- analyze -------------------------------------------------------------------------------


def applied(m: Migration, **placeholders: str) -> AppliedMigration:
    return AppliedMigration(m.version, m.description, m.checksum, placeholders)


M1 = migration("RETURN 1", 1)
M2 = migration("RETURN {{EMBEDDING_DIMENSIONS}}", 2)
M3 = migration("RETURN 3", 3)
VALUES = {"EMBEDDING_DIMENSIONS": "384"}


def test_analyze_fresh_database_has_everything_pending() -> None:
    result = analyze([M1, M2, M3], [], VALUES)
    assert result.pending == (M1, M2, M3)
    assert result.ok
    assert [r.state for r in status_rows(result)] == [STATE_PENDING] * 3


def test_analyze_up_to_date() -> None:
    result = analyze([M1, M2], [applied(M1), applied(M2, EMBEDDING_DIMENSIONS="384")], VALUES)
    assert result.pending == () and result.ok
    assert [m.version for m, _ in result.applied] == [1, 2]
    result.raise_for_problems()


def test_analyze_reports_edited_file() -> None:
    edited = migration("RETURN 'edited'", 1)
    result = analyze([edited, M2], [applied(M1)], VALUES)
    assert [m.version for m, _ in result.changed] == [1]
    assert result.pending == (M2,)
    assert not result.ok
    with pytest.raises(ChecksumMismatch, match=r"V1__x\.cypher"):
        result.raise_for_problems()
    assert [r.state for r in status_rows(result)] == [STATE_CHANGED, STATE_PENDING]


def test_analyze_reports_changed_dimension() -> None:
    result = analyze([M1, M2], [applied(M1), applied(M2, EMBEDDING_DIMENSIONS="384")],
                     {"EMBEDDING_DIMENSIONS": "768"})
    assert [(m.version, d) for m, _, d in result.settings_changed] == [
        (2, {"EMBEDDING_DIMENSIONS": ("384", "768")})]
    with pytest.raises(SettingsMismatch, match="EMBEDDING_DIMENSIONS was 384 and is now 768"):
        result.raise_for_problems()
    assert isinstance(SettingsMismatch("x"), MigrationError)
    assert isinstance(SettingsMismatch("x"), ConfigurationError)
    assert status_rows(result)[1].state == STATE_SETTINGS_CHANGED
    # Without current values the comparison is skipped.
    assert analyze([M1, M2], [applied(M1), applied(M2, EMBEDDING_DIMENSIONS="384")]).ok


def test_analyze_reports_unknown_applied_versions() -> None:
    result = analyze([M1], [applied(M1), applied(M2, EMBEDDING_DIMENSIONS="384")], VALUES)
    assert [a.version for a in result.unknown] == [2]
    with pytest.raises(MigrationError, match="no file here: V0002"):
        result.raise_for_problems()
    assert [r.state for r in status_rows(result)] == [STATE_APPLIED, STATE_UNKNOWN]


def test_analyze_reports_out_of_order_files() -> None:
    result = analyze([M1, M2, M3], [applied(M1), applied(M3)], VALUES)
    assert result.pending == (M2,)
    assert result.out_of_order == (M2,)
    with pytest.raises(MigrationError, match="older than the newest applied"):
        result.raise_for_problems()
    assert status_rows(result)[1].state == STATE_OUT_OF_ORDER


M4_2026 = migration("// requires: Neo4j 2026.01\nRETURN 4", 4)
M5 = migration("RETURN 5", 5)


def test_server_lines_parse_and_order() -> None:
    assert server_line("5.26.31") == (5, 26)
    assert server_line("2026.09.0") == (2026, 9)
    assert server_line("dev") is None
    assert (5, 26) < (2026, 1) <= (2026, 9)
    assert M4_2026.requires == (2026, 1) and M5.requires is None
    with pytest.raises(MigrationError, match="more than one"):
        migration("// requires: Neo4j 2026.01\n// requires: Neo4j 2026.02\nRETURN 1", 6)


def test_a_migration_for_a_newer_line_waits_and_blocks_nothing() -> None:
    result = analyze([M1, M4_2026, M5], [applied(M1)], VALUES, server=(5, 26))
    assert result.waiting == (M4_2026,) and result.pending == (M5,) and result.ok
    rows = status_rows(result)
    assert [r.state for r in rows] == [STATE_APPLIED, STATE_WAITING, STATE_PENDING]
    assert "needs Neo4j 2026.01 or newer (this server: 5.26)" in rows[1].detail
    # A later version applied on 5.26 does not make it out of order once the server is new.
    upgraded = analyze([M1, M4_2026, M5], [applied(M1), applied(M5)], VALUES, server=(2026, 9))
    assert upgraded.pending == (M4_2026,) and upgraded.out_of_order == () and upgraded.ok
    # A plain migration older than the newest applied one is still out of order.
    assert analyze([M1, M3, M5], [applied(M1), applied(M5)], VALUES,
                   server=(2026, 9)).out_of_order == (M3,)
    # An unknown server line (or none read) waits for nothing.
    assert analyze([M1, M4_2026], [applied(M1)], VALUES).pending == (M4_2026,)


def test_repository_line_migrations() -> None:
    """V0006 backfills on every line; V0007's filtered indexes wait for 2026.01."""
    found = {m.version: m for m in discover(REPO_MIGRATIONS)}
    assert found[6].requires is None
    assert found[7].requires == (2026, 1)
    rendered = found[7].render(placeholder_values(Settings()))
    assert [t.split("\n")[0] for t in rendered] == [
        f"CYPHER 25 CREATE VECTOR INDEX {name}_ontology IF NOT EXISTS"
        for name in ("typical_rag", "paragraphs", "summaries")]
    assert all("WITH [" in t and ".ontologyid]" in t for t in rendered)


def test_text_inside_strings_is_kept_exactly() -> None:
    source = "RETURN 'a  \n\n  b' AS s,   \n\n  `x  \n\ny` AS t;\nRETURN 1"
    assert texts(source) == ["RETURN 'a  \n\n  b' AS s,\n  `x  \n\ny` AS t", "RETURN 1"]
