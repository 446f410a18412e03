"""docs/architecture.md stays true: every module, function and test it cites exists, every
module of the package is placed in its layers table, and every docstring that cites one of its
sections names a section title it has. A rename that forgets the doc fails here."""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import thalabus_graph

PACKAGE = Path(thalabus_graph.__file__).parent
ROOT = PACKAGE.parent
DOC = ROOT / "docs" / "architecture.md"
TICKS = re.compile(r"`([^`]+)`")


def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


def section(title: str) -> str:
    """The text of the ``## title`` section, up to the next ``##`` heading."""
    text = doc_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def table_rows(text: str) -> Iterator[list[str]]:
    """The cells of every table row of ``text`` (header and separator rows skipped)."""
    for line in text.splitlines():
        if line.startswith("| ") and not line.startswith("|---"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if cells[0] not in ("rule", "layer", "concept"):
                yield cells


def resolve(module_path: str, name: str) -> object:
    """``name`` (``Class.attr`` allowed) inside the package module at ``module_path``."""
    dotted = "thalabus_graph." + module_path.removesuffix(".py").replace("/", ".")
    obj: object = importlib.import_module(dotted.removesuffix(".__init__"))
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def defines(path: Path, name: str) -> bool:
    """Whether the Python file defines a function or class ``name`` (at any indentation)."""
    pattern = rf"^\s*(async\s+)?(def|class)\s+{re.escape(name)}\b"
    return re.search(pattern, path.read_text(encoding="utf-8"), re.MULTILINE) is not None


def check_code_cell(cell: str) -> int:
    """Check one ``code`` cell: a module path, then names defined in it. Returns the names."""
    module = ""
    names = 0
    for token in TICKS.findall(cell):
        if token.endswith(".py"):
            module = token
            path = ROOT / token if token.startswith("tests/") else PACKAGE / token
            assert path.exists(), f"no module {token}"
        elif "/" in token:
            assert list(ROOT.glob(token)), f"no file {token}"
        else:
            assert module, f"{token!r} cited before any module"
            if module.startswith("tests/"):
                assert defines(ROOT / module, token), f"{module} defines no {token}"
            else:
                try:
                    resolve(module, token)
                except AttributeError:
                    raise AssertionError(f"{module} has no {token}") from None
            names += 1
    return names


def check_test_cell(cell: str) -> int:
    """Check one ``test`` cell: ``dir/test_file.py::test_name`` or ``::test_name`` (same
    file as the one before). Returns how many tests it cites."""
    current: Path | None = None
    cited = 0
    for token in TICKS.findall(cell):
        file, sep, name = token.partition("::")
        if not sep:
            continue
        if file:
            current = ROOT / "tests" / file
            assert current.exists(), f"no test file tests/{file}"
        assert current is not None, f"{token} names no file"
        assert re.search(rf"^\s*(async\s+)?def {re.escape(name)}\(",
                         current.read_text(encoding="utf-8"), re.MULTILINE), \
            f"{current.relative_to(ROOT)} has no test {name}"
        cited += 1
    return cited


def test_every_rule_cites_code_and_tests_that_exist() -> None:
    rows = list(table_rows(section("Where each rule lives")))
    assert len(rows) >= 50
    for rule, code, tests in rows:
        assert check_code_cell(code) >= 1, f"rule {rule!r} names no function or class"
        assert check_test_cell(tests) >= 1, f"rule {rule!r} names no test"


def test_the_checker_catches_a_stale_citation() -> None:
    with pytest.raises(AssertionError):
        check_code_cell("`fragments.py` `combine_andd`")
    with pytest.raises(AssertionError):
        check_code_cell("`combine_and`")
    with pytest.raises(AssertionError):
        check_test_cell("`unit/test_fragments.py::test_no_such_test`")
    with pytest.raises(AssertionError):
        check_test_cell("`unit/test_fragments.py::test_ties_are_broken_by_fragment_id`, "
                        "`::test_gone`")
    assert check_code_cell("`plan/cost.py` `choose_vector_path`") == 1


def test_every_module_of_the_package_is_in_the_layers_table() -> None:
    layers = section("Layers")
    cited = set(TICKS.findall(layers))
    words = {re.sub(r"[`(),]", "", w) for w in layers.split()}
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if path.name == "__init__.py":
            continue
        if len(rel.parts) == 1:
            ok = rel.name in cited
        else:
            ok = f"{rel.parts[0]}/" in cited and rel.stem in words
        if not ok:
            missing.append(str(rel))
    assert missing == []


def package_names() -> dict[str, object]:
    """Every top-level name of every package module (first definition wins)."""
    names: dict[str, object] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        dotted = ".".join(rel.parts).removesuffix(".__init__")
        for name, value in vars(importlib.import_module(dotted)).items():
            names.setdefault(name, value)
    return names


def module_named(head: str) -> object | None:
    """The package module a prose citation starts with (``fragments``, ``rerank``, ...)."""
    for prefix in ("", "query.", "plan.", "search.", "rerank.", "graph.", "embeddings."):
        rel = PACKAGE / f"{prefix}{head}".replace(".", "/")
        if rel.with_suffix(".py").exists() or (rel / "__init__.py").exists():
            return importlib.import_module(f"thalabus_graph.{prefix}{head}")
    return None


def is_instance_attribute(cls: object, name: str) -> bool:
    """Whether instances of ``cls`` get ``name``: a dataclass field or ``self.name = ...``."""
    if not isinstance(cls, type):
        return False
    if name in getattr(cls, "__dataclass_fields__", {}):
        return True
    return re.search(rf"self\.{name}\s*[:=]", inspect.getsource(cls)) is not None


def check_prose_token(token: str, names: dict[str, object], cypher: str) -> bool:
    """Check one backticked prose token that looks like code; False when it is not code."""
    if re.fullmatch(r"[\w./*]+", token) and ("/" in token or token.endswith((".py", ".md"))):
        assert any([*PACKAGE.glob(token), *ROOT.glob(token)]), token
        return True
    setting_fields = {name.upper() for name in thalabus_graph.Settings.__dataclass_fields__}
    if re.fullmatch(r"[A-Z][A-Z0-9_]+", token):
        assert token in setting_fields or token in names or token in cypher, token
        return True
    if re.fullmatch(r"[A-Z][a-z]\w*", token):
        assert token in names, token
        return True
    if not re.fullmatch(r"_?[A-Za-z]\w*(\.\w+)+", token):
        return False
    if token.startswith("thalabus_graph."):
        importlib.import_module(token)
        return True
    head, *rest = token.split(".")
    obj = module_named(head) or names.get(head)
    if obj is None:
        return False
    for part in rest:
        assert hasattr(obj, part) or is_instance_attribute(obj, part), token
        obj = getattr(obj, part, None)
    return True


def test_cited_names_in_the_prose_exist() -> None:
    """Backticked names in the prose sections (settings, classes, ``module.name``,
    ``Class.method``, graph labels) exist in the package, its settings or its Cypher."""
    prose = doc_text().split("\n## Where each rule lives", 1)[0]
    prose = re.sub(r"^```.*?^```", "", prose, flags=re.MULTILINE | re.DOTALL)
    names = package_names()
    cypher = " ".join(p.read_text(encoding="utf-8") for p in (ROOT / "cypher").glob("*.cypher"))
    cypher += " ".join(p.read_text(encoding="utf-8") for p in (ROOT / "migrations").glob("*"))
    checked = 0
    for token in sorted(set(TICKS.findall(prose))):
        try:
            checked += check_prose_token(token, names, cypher)
        except AssertionError:
            raise AssertionError(f"docs/architecture.md cites {token!r}, which does not "
                                 "exist") from None
    assert checked >= 100


SECTION_REF = re.compile(r'docs/architecture\.md,\s*(?:#\s*)?"([^"]+)"')


def section_references() -> Iterator[tuple[str, str]]:
    """(file, section title) for every citation of a docs/architecture.md section."""
    files = [*PACKAGE.rglob("*.py"), *(ROOT / "tests").rglob("*.py"),
             *(ROOT / "benchmarks").rglob("*.py"), ROOT / "README.md"]
    for path in files:
        text = path.read_text(encoding="utf-8")
        for title in SECTION_REF.findall(text):
            yield str(path.relative_to(ROOT)), " ".join(title.split())


def test_docstrings_cite_sections_that_exist() -> None:
    titles = set(re.findall(r"^#+ (.+)$", doc_text(), re.MULTILINE))
    refs = list(section_references())
    assert len(refs) >= 5
    wrong = [f"{file}: {title}" for file, title in refs if title not in titles]
    assert wrong == []


def test_the_code_points_at_the_repository_docs_not_numbered_sections() -> None:
    stale = []
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if re.search(r"ARCHITECTURE,? section \d|as the seed does", text):
            stale.append(str(path.relative_to(ROOT)))
    assert stale == []


def test_the_page_stays_one_read() -> None:
    """A newcomer reads the whole page before touching the code: measurements belong in
    docs/benchmarks.md and the reasons behind defaults in docs/decisions/."""
    lines = len(doc_text().splitlines())
    assert lines <= 400, f"docs/architecture.md has {lines} lines, at most 400"
