"""The app_graph benchmark's own parts that decide what it reports: when two answers count as
the same, the paired ratio, the rotation of sides and the written-out query."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.app_graph import (
    REQUIRED,
    fragment_mismatch,
    paired_ratio,
    rotated,
    written_out,
)
from thalabus_graph.fragments import Fragment


def frag(fid: str, score: float) -> Fragment:
    return Fragment(fid, fid.rsplit("-", 1)[0], "text", score, "chapters")


def test_the_same_fragments_and_scores_are_no_mismatch() -> None:
    a = [frag("scale-1-c1", 0.9), frag("scale-2-c1", 0.8)]
    b = [frag("scale-1-c1", 0.9 + 1e-12), frag("scale-2-c1", 0.8)]
    assert fragment_mismatch(a, b) is None
    assert fragment_mismatch([], []) is None


def test_a_score_order_or_membership_difference_is_reported() -> None:
    a = [frag("scale-1-c1", 0.9), frag("scale-2-c1", 0.8)]
    scored = fragment_mismatch(a, [frag("scale-1-c1", 0.9), frag("scale-2-c1", 0.7)])
    assert scored is not None and scored["max_score_diff"] == pytest.approx(0.1)
    assert not scored["order_differs"]
    swapped = fragment_mismatch(a, a[::-1])
    assert swapped is not None and swapped["order_differs"] and swapped["max_score_diff"] == 0
    missing = fragment_mismatch(a, [*a[:1], frag("scale-3-c1", 0.5)])
    assert missing is not None
    assert (missing["only_first"], missing["only_second"]) == (1, 1)
    assert missing["fragments"] == [2, 2]


def test_the_paired_ratio_is_the_median_of_per_query_ratios() -> None:
    assert paired_ratio([2.0, 3.0, 10.0], [1.0, 3.0, 5.0]) == 2.0
    with pytest.raises(ValueError):
        paired_ratio([1.0], [1.0, 2.0])
    with pytest.raises(ValueError):
        paired_ratio([], [])


def test_the_side_going_first_rotates() -> None:
    sides = ["a", "b", "c"]
    assert [rotated(sides, t)[0] for t in range(4)] == ["a", "b", "c", "a"]
    assert sorted(rotated(sides, 5)) == sides


def test_the_written_out_query_keeps_the_query_left_of_the_filter() -> None:
    assert written_out('"p" OR "q"', "SKEW=v10") == '("p" OR "q") AND (SKEW=v10)'


def test_each_required_filter_holds_for_the_chapters_its_text_selects() -> None:
    skew = np.array([0, 1, 2, 3, 1], np.int64)
    region = np.array([1, 0, 1, 2, 2], np.int64)
    holds = {c.name: c.holds(skew, region).tolist() for c in REQUIRED}
    assert holds["10%"] == [False, True, False, False, True]
    assert holds["not_50%"] == [False, True, True, True, True]
    assert holds["or_14.5%"] == [True, True, True, False, True]
    assert holds["defined_1%"] == [False, False, True, False, False]
