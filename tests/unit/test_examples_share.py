"""``tests.support.examples``: the share of a property test's examples a second line draws."""

from __future__ import annotations

import pytest

from tests.support.examples import SHARE_ENV, examples


def test_without_the_variable_every_example_is_drawn(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SHARE_ENV, raising=False)
    assert examples(25) == 25


@pytest.mark.parametrize(("share", "count", "drawn"),
                         [("0.4", 25, 10), ("0.4", 30, 12), ("0.4", 1, 1), ("1", 7, 7)])
def test_a_share_scales_the_draw_and_keeps_at_least_one(
        monkeypatch: pytest.MonkeyPatch, share: str, count: int, drawn: int) -> None:
    monkeypatch.setenv(SHARE_ENV, share)
    assert examples(count) == drawn


@pytest.mark.parametrize("share", ["0", "1.5", "-0.2"])
def test_a_share_outside_0_to_1_is_refused(monkeypatch: pytest.MonkeyPatch, share: str) -> None:
    monkeypatch.setenv(SHARE_ENV, share)
    with pytest.raises(ValueError, match=SHARE_ENV):
        examples(10)
