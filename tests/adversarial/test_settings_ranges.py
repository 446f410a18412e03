"""Hostile settings: NaN, infinities and out-of-range values are refused with the setting's
name, through the API and the CLI; a misspelled THALABUS_* name is reported, not fatal."""

from __future__ import annotations

import logging
import math
from dataclasses import fields

import pytest

from thalabus_graph.cli import main
from thalabus_graph.errors import ConfigurationError
from thalabus_graph.settings import RANGES, Settings, misspelled_variables

NUMERIC = [f.name for f in fields(Settings)
           if isinstance(getattr(Settings(), f.name), int | float)
           and not isinstance(getattr(Settings(), f.name), bool)]


def test_every_numeric_setting_has_a_range_holding_its_default() -> None:
    assert sorted(NUMERIC) == sorted(RANGES)
    for name, (low, high) in RANGES.items():
        assert low <= getattr(Settings(), name) <= high, name


@pytest.mark.parametrize("name", NUMERIC)
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nan_and_infinities_are_refused_with_the_name(name: str, bad: float) -> None:
    with pytest.raises(ConfigurationError, match=name):
        Settings(**{name: bad})


@pytest.mark.parametrize("name", NUMERIC)
def test_values_just_outside_the_range_are_refused(name: str) -> None:
    low, high = RANGES[name]
    for bad in (low - 1, high + 1):
        with pytest.raises(ConfigurationError, match=name):
            Settings(**{name: bad})


@pytest.mark.parametrize(("variable", "raw"), [
    ("THALABUS_MIN_SCORE", "nan"), ("THALABUS_MIN_SCORE", "2"),
    ("THALABUS_SCORE_FACTOR_CHAPTERS", "nan"), ("THALABUS_SCORE_FACTOR_CHAPTERS", "-1"),
    ("THALABUS_RERANKER_TIMEOUT_SECONDS", "nan"), ("THALABUS_VECTOR_OVERFETCH_FACTOR", "nan"),
    ("THALABUS_TOP_N_CHAPTERS", "inf"),
])
def test_the_reported_environment_values_are_refused(variable: str, raw: str) -> None:
    with pytest.raises(ConfigurationError, match=variable):
        Settings.from_env({variable: raw})


def test_the_cli_refuses_a_nan_setting_in_one_line_with_exit_2(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("THALABUS_MIN_SCORE", "nan")
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:1")
    assert main(["query", '"zebra"']) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "THALABUS_MIN_SCORE" in err


def test_a_misspelled_name_is_reported_with_the_name_it_probably_meant(
        caplog: pytest.LogCaptureFixture) -> None:
    env = {"THALABUS_MIN_SCOR": "0.3", "THALABUS_TOPN_CHAPTERS": "5",
           "THALABUS_NEO4J_DATA": "/x", "THALABUS_SOMETHING_ELSE_ENTIRELY": "1"}
    assert misspelled_variables(env) == {"THALABUS_MIN_SCOR": "THALABUS_MIN_SCORE",
                                         "THALABUS_TOPN_CHAPTERS": "THALABUS_TOP_N_CHAPTERS"}
    with caplog.at_level(logging.WARNING, logger="thalabus_graph"):
        settings = Settings.from_env(env)
    assert settings.min_score == Settings().min_score  # ignored, not fatal
    assert "did you mean THALABUS_MIN_SCORE?" in caplog.text


def test_the_cli_prints_the_misspelled_name_on_stderr(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("THALABUS_MIN_SCOR", "0.3")
    monkeypatch.setenv("THALABUS_MIN_SCORE", "nan")  # stop before any connection
    assert main(["query", '"zebra"']) == 2
    assert "THALABUS_MIN_SCOR is not a thalabus-graph setting" in capsys.readouterr().err


def test_without_logging_a_misspelled_name_is_a_python_warning(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import thalabus_graph.settings as settings_module

    monkeypatch.setattr(settings_module, "logging_unconfigured", lambda: True)
    with pytest.warns(UserWarning, match="did you mean THALABUS_MIN_SCORE"):
        Settings.from_env({"THALABUS_MIN_SCOR": "0.3"})


def test_a_word_setting_read_from_the_environment_names_its_variable() -> None:
    with pytest.raises(ConfigurationError, match=r"^THALABUS_RERANKER_PROTOCOL: reranker_protocol "
                                                 r"must be one of .*, not 'vllm'"):
        Settings.from_env({"THALABUS_RERANKER_PROTOCOL": "vllm"})
    with pytest.raises(ConfigurationError, match=r"^reranker_protocol must be one of"):
        Settings.from_env({}, reranker_protocol="vllm")
