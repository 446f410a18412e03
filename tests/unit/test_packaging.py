"""The package ships what it needs: statement names match the `.cypher` files, packages listed.

Statement names are collected exactly from the source (an AST walk), not by searching text:
every call that takes a statement name (``db.read/write/read_plain/read_profiled``,
``run(tx, ...)``, ``cypher_library.load``, the ``_read``/``_schema`` helpers) must pass a
literal, a literal from a ``for`` over a tuple of literals (an f-string over such a loop
variable included), or a parameter of a function that is itself such a call. Anything else
fails the test, so a name can never hide from it.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from thalabus_graph.errors import ConfigurationError
from thalabus_graph.graph import cypher_library

ROOT = Path(__file__).resolve().parents[2]
SCANNED = [ROOT / "thalabus_graph", ROOT / "tests", ROOT / "benchmarks"]

# method name -> position of the statement-name argument
METHODS = {"read": 0, "write": 0, "read_plain": 0, "read_profiled": 0, "load": 0, "fill": 0,
           "_read": 1, "_schema": 0}
DB_RECEIVERS = ("db", "database", "clean_db")
RUNNER_METHODS = {"read": 1, "quiet": 0, "alone": 0, "prefetch": 0, "stream": 1, "run_batch": 0}
"""The plan's runner (``search.runner.Runner``): method -> position of the statement name."""


@dataclass(frozen=True)
class Use:
    """One statement name used at a place in the source."""

    name: str
    where: str


def _receiver(node: ast.expr) -> str:
    """Dotted text of a call's receiver (``self.db`` -> ``self.db``)."""
    return ast.unparse(node)


def _name_argument(call: ast.Call) -> ast.expr | None:
    """The statement-name argument of ``call`` when it is a statement call, else None."""
    func = call.func
    if (isinstance(func, ast.Attribute) and func.attr in RUNNER_METHODS
            and (_receiver(func.value).split(".")[-1] == "runner"
                 or _receiver(func.value).startswith("Runner("))):
        position = RUNNER_METHODS[func.attr]
        return call.args[position] if len(call.args) > position else None
    if isinstance(func, ast.Name) and func.id == "run" and len(call.args) >= 2:
        first = call.args[0]
        return call.args[1] if isinstance(first, ast.Name) and first.id == "tx" else None
    if not isinstance(func, ast.Attribute) or func.attr not in METHODS:
        return None
    receiver = _receiver(func.value)
    if func.attr in ("load", "fill"):
        ok = receiver.endswith("cypher_library")
    elif func.attr in ("_read", "_schema"):
        ok = receiver == "self"
    else:
        ok = receiver.split(".")[-1] in DB_RECEIVERS
    position = METHODS[func.attr]
    if not ok or len(call.args) <= position:
        return None
    return call.args[position]


class _Collector(ast.NodeVisitor):
    """Walks one module, tracking enclosing functions and ``for`` loops over literals."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.params: list[set[str]] = []
        self.loops: list[dict[str, list[str]]] = []
        self.uses: list[Use] = []
        self.unresolved: list[str] = []

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        names = {a.arg for a in [*node.args.posonlyargs, *node.args.args,
                                 *node.args.kwonlyargs]}
        self.params.append(names)
        self.generic_visit(node)
        self.params.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_For(self, node: ast.For) -> None:
        self.loops.append(_loop_bindings(node.target, node.iter))
        self.generic_visit(node)
        self.loops.pop()

    def visit_Call(self, node: ast.Call) -> None:
        arg = _name_argument(node)
        if arg is not None:
            where = f"{self.where}:{node.lineno}"
            names = self._resolve(arg)
            if names is None:
                self.unresolved.append(f"{where}: {ast.unparse(arg)}")
            else:
                self.uses.extend(Use(n, where) for n in names)
        self.generic_visit(node)

    def _resolve(self, arg: ast.expr) -> list[str] | None:
        """Literal names ``arg`` can hold; [] for a parameter; None when it cannot be known."""
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return [arg.value]
        if isinstance(arg, ast.Name):
            for loop in reversed(self.loops):
                if arg.id in loop:
                    return loop[arg.id]
            if any(arg.id in scope for scope in self.params):
                return []
            return None
        if isinstance(arg, ast.JoinedStr):
            out = [""]
            for part in arg.values:
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    out = [o + part.value for o in out]
                elif isinstance(part, ast.FormattedValue):
                    values = self._resolve(part.value)
                    if not values:
                        return None
                    out = [o + v for o in out for v in values]
                else:
                    return None
            return out
        return None


def _loop_bindings(target: ast.expr, iterable: ast.expr) -> dict[str, list[str]]:
    """``for a in ("x", "y")`` -> {a: [x, y]}; ``for a, b in (("x", 1), ...)`` -> {a: [x]}."""
    if not isinstance(iterable, ast.Tuple | ast.List):
        return {}
    out: dict[str, list[str]] = {}
    for item in iterable.elts:
        if isinstance(target, ast.Name) and isinstance(item, ast.Constant):
            if isinstance(item.value, str):
                out.setdefault(target.id, []).append(item.value)
        elif isinstance(target, ast.Tuple) and isinstance(item, ast.Tuple):
            for sub_target, sub_item in zip(target.elts, item.elts, strict=False):
                if (isinstance(sub_target, ast.Name) and isinstance(sub_item, ast.Constant)
                        and isinstance(sub_item.value, str)):
                    out.setdefault(sub_target.id, []).append(sub_item.value)
    return out


def _python_files() -> Iterator[Path]:
    for folder in SCANNED:
        yield from sorted(folder.rglob("*.py"))


def _scan() -> tuple[list[Use], list[str]]:
    uses: list[Use] = []
    unresolved: list[str] = []
    for path in _python_files():
        collector = _Collector(str(path.relative_to(ROOT)))
        collector.visit(ast.parse(path.read_text(encoding="utf-8")))
        uses += collector.uses
        unresolved += collector.unresolved
    return uses, unresolved


def test_every_statement_name_in_the_code_exists() -> None:
    uses, unresolved = _scan()
    assert not unresolved, f"statement names the test cannot resolve: {unresolved}"
    available = set(cypher_library.available())
    missing = sorted(f"{u.where}: {u.name}" for u in uses if u.name not in available)
    assert not missing, f"no .cypher file for: {missing}"
    assert len(uses) > 30  # the scan sees the code (guards against a silently empty walk)


def test_every_cypher_file_is_used() -> None:
    uses, _ = _scan()
    used = {u.name for u in uses}
    unused = sorted(set(cypher_library.available()) - used)
    assert not unused, f".cypher files no code uses: {unused}"


def test_the_collector_resolves_loops_fstrings_and_rejects_unknowns() -> None:
    source = (
        "def f(db, tx, name):\n"
        "    db.read('a')\n"
        "    for kind in ('x', 'y'):\n"
        "        run(tx, f'make_{kind}')\n"
        "    for s, rows in (('b', 1), ('c', 2)):\n"
        "        db.write(s)\n"
        "    db.read(name)\n"
        "    db.read(other)\n"
    )
    collector = _Collector("m.py")
    collector.visit(ast.parse(source))
    assert sorted(u.name for u in collector.uses) == ["a", "b", "c", "make_x", "make_y"]
    assert collector.unresolved == ["m.py:8: other"]


def test_statements_come_from_the_package_data() -> None:
    folder = cypher_library.cypher_dir()
    assert (folder / "search_vector.cypher").is_file()
    assert "search_vector" in cypher_library.available()
    assert cypher_library.load("search_vector").strip()


def test_every_package_on_disk_is_listed_in_pyproject() -> None:
    """A package missing from ``[tool.setuptools] packages`` would be left out of the wheel."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    setuptools = config["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    mapped = setuptools["package-dir"]
    on_disk = {".".join(p.relative_to(ROOT).parts) for p in (ROOT / "thalabus_graph").rglob("*")
               if p.is_dir() and p.name != "__pycache__"
               and any(c.is_file() and c.name != ".DS_Store" for c in p.iterdir())}
    on_disk.add("thalabus_graph")
    assert listed == on_disk | set(mapped)
    assert mapped == {"thalabus_graph._cypher": "cypher",
                      "thalabus_graph._migrations": "migrations"}


def test_every_part_is_included_and_every_include_resolves() -> None:
    """A ``{{> part}}`` line names a shipped ``_part.cypher``; no part is left unused, and
    the loaded statement holds the part's text, not the include line."""
    included = {part for name in cypher_library.available()
                for part in cypher_library.includes(name)}
    assert included == set(cypher_library.parts())
    assert {"search_restriction", "search_details"} <= included
    for name in cypher_library.available():
        assert "{{>" not in _loaded(name)
    text = cypher_library.load("search_fulltext")
    assert "AND ($filter IS NULL OR EXISTS {" in text and "END AS details" in text


def _loaded(name: str, params: dict[str, object] | None = None) -> str:
    return cypher_library.load(name, params)


def test_an_unknown_or_nested_part_is_a_clear_error(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "s.cypher").write_text("MATCH (n)\n{{> missing}}\nRETURN n\n", encoding="utf-8")
    (tmp_path / "t.cypher").write_text("MATCH (n)\n  {{> outer }}\n", encoding="utf-8")
    (tmp_path / "_outer.cypher").write_text("// a part\n{{> inner}}\n", encoding="utf-8")
    (tmp_path / "_inner.cypher").write_text("RETURN n\n", encoding="utf-8")
    monkeypatch.setenv("THALABUS_CYPHER_DIR", str(tmp_path))
    cypher_library.cache_clear()
    try:
        assert cypher_library.available() == ["s", "t"]
        assert cypher_library.parts() == ["inner", "outer"]
        with pytest.raises(ConfigurationError, match="no Cypher part named 'missing'"):
            _loaded("s")
        with pytest.raises(ConfigurationError, match="one level deep"):
            _loaded("t")
    finally:
        cypher_library.cache_clear()


def test_a_section_is_kept_only_when_its_parameter_is_given(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "s.cypher").write_text(
        "MATCH (n)\nWHERE n.a = 1\n{{#ids}}\n  AND n.id IN $ids\n{{/ids}}\n"
        "{{> tail}}\n", encoding="utf-8")
    (tmp_path / "_tail.cypher").write_text(
        "{{#limit}}\nWITH n LIMIT $limit\n{{/limit}}\nRETURN n\n", encoding="utf-8")
    (tmp_path / "open.cypher").write_text("MATCH (n)\n{{#ids}}\nRETURN n\n", encoding="utf-8")
    (tmp_path / "nested.cypher").write_text(
        "MATCH (n)\n{{#a}}\n{{#b}}\n{{/b}}\n{{/a}}\nRETURN n\n", encoding="utf-8")
    (tmp_path / "stray.cypher").write_text("MATCH (n)\n{{/a}}\nRETURN n\n", encoding="utf-8")
    monkeypatch.setenv("THALABUS_CYPHER_DIR", str(tmp_path))
    cypher_library.cache_clear()
    try:
        assert cypher_library.sections("s") == {"ids", "limit"}
        whole = _loaded("s")
        assert "{{" not in whole and "n.id IN $ids" in whole and "LIMIT $limit" in whole
        assert _loaded("s", {"ids": ["x"], "limit": 3}) == whole
        bare = _loaded("s", {"ids": None})
        assert bare == "MATCH (n)\nWHERE n.a = 1\nRETURN n"
        assert _loaded("s", {"limit": 3}) == (
            "MATCH (n)\nWHERE n.a = 1\nWITH n LIMIT $limit\nRETURN n")
        for name, message in (("open", "not closed"), ("nested", "do not nest"),
                              ("stray", "closed without opening")):
            with pytest.raises(ConfigurationError, match=message):
                _loaded(name, {})
    finally:
        cypher_library.cache_clear()


def test_a_search_without_parent_datasets_never_names_the_dataset_label() -> None:
    """Neo4j replans a statement when the counts of a label it names change a lot; datasets
    appear by the dozen on a fresh graph, so a statement of a search without parent datasets
    must not name them (each replan of a search statement costs 100 to 500 ms of CPU)."""
    scoped = [name for name in cypher_library.available()
              if ":Dataset" in _loaded(name) and "$datasetids" in _loaded(name)]
    assert {"search_vector", "search_vector_exact", "search_fulltext", "category_vocabulary",
            "search_filter_documents", "search_scope_sizes"} <= set(scoped)
    for name in scoped:
        assert "datasetids" in cypher_library.sections(name), name
        assert ":Dataset" not in _loaded(name, {"datasetids": None}), name
        assert ":Dataset" in _loaded(name, {"datasetids": ["d"]}), name


def test_the_text_bounded_statements_are_those_that_cut_texts() -> None:
    """The runner gives ``$max_text`` to exactly the statements that read it: one it missed
    would return every text as null, one it gave needlessly would plan a parameter for
    nothing."""
    from thalabus_graph.search.runner import TEXT_BOUNDED

    def reads_the_bound(file: str) -> bool:
        return "$max_text" in (cypher_library.cypher_dir() / f"{file}.cypher").read_text()

    reading = {name for name in cypher_library.available()
               if reads_the_bound(name)
               or any(reads_the_bound("_" + part) for part in cypher_library.includes(name))}
    assert reading == set(TEXT_BOUNDED)
