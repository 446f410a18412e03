"""The closed sets of choices (Literal types) agree with the code that accepts them at run time,
where values arrive as plain strings (environment variables, CLI flags)."""

from __future__ import annotations

from typing import get_args

import pytest

from thalabus_graph.errors import ConfigurationError
from thalabus_graph.graph import migrations
from thalabus_graph.rerank import NoReranking, reranker_from_settings
from thalabus_graph.rerank.score_api import PROTOCOLS, ScoreApiReranker
from thalabus_graph.rerank.stage import DEGRADE_REASONS, DegradeReason
from thalabus_graph.settings import (
    CHOICES,
    FUSION_RULES,
    RERANKER_PROTOCOLS,
    Fusion,
    RerankerProtocol,
    Settings,
)


def test_fusion_rules_are_the_literal_and_each_is_accepted() -> None:
    assert get_args(Fusion) == FUSION_RULES
    for rule in FUSION_RULES:
        assert Settings.from_env({"THALABUS_FUSION": rule}).fusion == rule
    with pytest.raises(ConfigurationError, match="fusion must be one of"):
        Settings.from_env({"THALABUS_FUSION": "average"})


def test_reranker_protocols_are_the_score_apis_plus_chat_and_none() -> None:
    assert get_args(RerankerProtocol) == RERANKER_PROTOCOLS
    assert set(RERANKER_PROTOCOLS) == {*PROTOCOLS, "chat", "none"}
    for protocol in PROTOCOLS:
        settings = Settings(reranker_url="http://127.0.0.1:9", reranker_protocol=protocol,
                            reranker_model="m")
        reranker = reranker_from_settings(settings)
        assert isinstance(reranker, ScoreApiReranker)
        assert reranker.protocol == protocol
    none = Settings(reranker_url="http://127.0.0.1:9", reranker_protocol="none")
    assert isinstance(reranker_from_settings(none), NoReranking)


def test_an_unknown_protocol_from_the_environment_is_refused_when_read() -> None:
    with pytest.raises(ConfigurationError, match="reranker_protocol must be one of"):
        Settings.from_env({"THALABUS_RERANKER_URL": "http://127.0.0.1:9",
                           "THALABUS_RERANKER_PROTOCOL": "grpc"})


@pytest.mark.parametrize("name", sorted(CHOICES))
def test_every_word_setting_refuses_a_word_it_does_not_take(name: str) -> None:
    assert CHOICES[name]
    with pytest.raises(ConfigurationError, match=f"{name} must be one of"):
        Settings(**{name: "no-such-word"})


def test_degrade_reasons_are_the_literal() -> None:
    assert get_args(DegradeReason) == DEGRADE_REASONS


def test_migration_states_are_the_literal() -> None:
    constants = {value for name, value in vars(migrations).items() if name.startswith("STATE_")}
    assert constants == set(get_args(migrations.MigrationState))
