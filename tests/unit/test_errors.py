"""The exception tree: every exception class of the package lives in ``errors.py`` and the tree
drawn in its docstring names each of them."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import thalabus_graph
from thalabus_graph import errors
from thalabus_graph.errors import (
    ConfigurationError,
    MigrationError,
    QueryNodeError,
    QueryNodeTypeError,
    SettingsMismatch,
    ThalabusError,
)
from thalabus_graph.query.ast import Category, Semantic, from_dict
from thalabus_graph.query.parser import parse

OPTIONAL = {"thalabus_graph.integrations.langchain", "thalabus_graph.integrations.llamaindex",
            "thalabus_graph.rerank.plots", "thalabus_graph.rerank.otel"}


def package_modules() -> list[str]:
    return sorted(info.name for info in pkgutil.walk_packages(
        thalabus_graph.__path__, prefix="thalabus_graph."))


def test_every_exception_class_is_defined_in_errors() -> None:
    elsewhere = []
    for name in package_modules():
        try:
            module = importlib.import_module(name)
        except ImportError:
            if name in OPTIONAL:        # an extra that is not installed cannot define anything
                continue
            raise
        for attr, value in vars(module).items():
            if (inspect.isclass(value) and issubclass(value, BaseException)
                    and value.__module__ == name and name != "thalabus_graph.errors"):
                elsewhere.append(f"{name}.{attr}")
    assert elsewhere == []


def test_the_docstring_tree_names_every_class() -> None:
    doc = errors.__doc__ or ""
    for name in errors.__all__:
        assert isinstance(getattr(errors, name), type)
        assert f" {name} " in doc or f" {name}\n" in doc, name


@pytest.mark.parametrize("build", [
    lambda: Semantic(""),
    lambda: Category("bad name", ("x",)),
    lambda: from_dict({"type": "NOPE"}),
    lambda: from_dict({"type": "SEMANTIC"}),
])
def test_bad_query_values_raise_query_node_error_which_is_a_value_error(build: object) -> None:
    with pytest.raises(QueryNodeError) as info:
        build()  # type: ignore[operator]
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, ThalabusError)
    assert not isinstance(info.value, TypeError)


@pytest.mark.parametrize("build", [
    lambda: Semantic(3),
    lambda: Category("A", "x"),
    lambda: parse(b"x"),
])
def test_wrong_types_raise_query_node_type_error(build: object) -> None:
    with pytest.raises(QueryNodeTypeError) as info:
        build()  # type: ignore[operator]
    assert isinstance(info.value, TypeError)
    assert isinstance(info.value, ValueError)       # a QueryNodeError as well
    assert isinstance(info.value, ThalabusError)


def test_settings_mismatch_is_a_migration_and_a_configuration_error() -> None:
    from thalabus_graph.graph import migrations

    assert migrations.SettingsMismatch is SettingsMismatch      # old import path still works
    assert issubclass(SettingsMismatch, MigrationError)
    assert issubclass(SettingsMismatch, ConfigurationError)
