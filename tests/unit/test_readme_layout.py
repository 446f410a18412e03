"""README.md is a page for users: at most 250 lines, installing and the two commands that
run the demo and the tests before any other section, and a settings table that says what
``Settings`` says. Reference material lives in docs/ (the full settings table is checked in
``test_public_api``)."""

from __future__ import annotations

import re
from pathlib import Path

from thalabus_graph.settings import Settings

README = Path(__file__).resolve().parents[2] / "README.md"
MAX_LINES = 250


def sections(text: str) -> list[tuple[str, int]]:
    """The ``## `` headings outside code blocks, each with its line number."""
    out: list[tuple[str, int]] = []
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("## "):
            out.append((line[3:].strip(), number))
    return out


def test_the_readme_is_at_most_250_lines() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= MAX_LINES


def test_install_and_the_demo_and_test_commands_come_before_any_other_section() -> None:
    text = README.read_text(encoding="utf-8")
    lines = text.splitlines()
    found = sections(text)
    assert found[0][0] == "Install"
    install = "\n".join(lines[found[0][1]:found[1][1]])
    assert 'pip install -e ".[local]"' in install and "python -m build" in install
    assert ".whl" in install
    first_other = next(number for title, number in found
                       if title not in ("Install", "Run the demo and the tests"))
    for command in ("make demo", "make test"):
        at = next(n for n, line in enumerate(lines, 1) if line.startswith(command))
        assert at < first_other, command


def test_the_readme_settings_are_settings_with_their_defaults() -> None:
    rows = re.findall(r"^\| `THALABUS_(\w+)` \| `([^`]*)` \|",
                      README.read_text(encoding="utf-8"), re.MULTILINE)
    assert len(rows) == 10
    defaults = Settings()
    for name, shown in rows:
        value = getattr(defaults, name.lower())
        assert shown == (repr(value) if value == "" else str(value)), name
