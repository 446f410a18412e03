"""The reference comparisons' contribution check (``tests.support.contributions``)."""

from __future__ import annotations

from tests.support.contributions import same_contributions


def test_printed_scores_may_round_apart_but_nothing_else() -> None:
    note = "calibrated:chapters 0.9180 -> 0.6626"
    assert same_contributions((note, "text:chapters"),
                              ("calibrated:chapters 0.9180 -> 0.6625", "text:chapters"))
    assert not same_contributions((note,), ("calibrated:chapters 0.9180 -> 0.6624",))
    assert not same_contributions((note,), ("calibrated:keywords 0.9180 -> 0.6626",))
    assert not same_contributions((note,), (note, "text:chapters"))
