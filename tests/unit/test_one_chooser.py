"""There is one place where a search step is chosen: ``plan/searches.py`` (``phrase_plan``).

Explain and the run agree because both ask that one function (an integration test compares
them on every sample-corpus query); this test keeps it the only one. The typed steps a phrase
runs (``PhraseCall``, ``VectorSearch``, ``TextSearch``, ``Fusion``, ``PhrasePlan``) are made
only there, and the cost model's choices (``choose_vector_path``, ``text_k``, ``uses_text``)
are asked only there, save for the one re-choice the runner makes when the ontology-filtered
index fails under a search (``search/vector.py``: the same function over the scope without
that index) and the normalisation search of a restricted text search (``search/text.py``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import thalabus_graph

PACKAGE = Path(thalabus_graph.__file__).parent
CHOOSER = "plan/searches.py"
STEP_TYPES = {"PhraseCall", "VectorSearch", "TextSearch", "Fusion", "PhrasePlan"}
CHOICES = {"choose_vector_path", "text_k", "uses_text"}
ALLOWED = {("search/vector.py", "choose_vector_path"), ("search/text.py", "text_k")}
"""The runner's re-choice after a failed in-index search, and the normalisation's k."""


def _called(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                names.add(func.id)
            elif isinstance(func, ast.Attribute):
                names.add(func.attr)
    return names


def _calls_by_module() -> dict[str, set[str]]:
    return {str(path.relative_to(PACKAGE)): _called(ast.parse(path.read_text("utf-8")))
            for path in PACKAGE.rglob("*.py")}


def test_steps_are_made_and_chosen_in_one_module() -> None:
    outside = sorted((module, name) for module, names in _calls_by_module().items()
                     if module != CHOOSER
                     for name in names & (STEP_TYPES | CHOICES)
                     if (module, name) not in ALLOWED)
    assert outside == []


def test_the_chooser_makes_every_step_type_and_both_readers_ask_it() -> None:
    calls = _calls_by_module()
    assert calls[CHOOSER] >= STEP_TYPES
    assert {"choose_vector_path", "text_k", "uses_text"} <= calls[CHOOSER]
    assert "planned" in calls["plan/compile.py"]  # explain: phrase_plan, rendered
    assert "phrase_plan" in calls["search/evaluator.py"]  # the run
