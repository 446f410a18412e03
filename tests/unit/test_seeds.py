"""The order a filter pattern's literals are walked in (``plan.seeds``): positive literals by
their known document counts, smallest first, ties in written order; a conjunction with a
positive literal counted 0 dropped. Checked as algebra on random conjunctions and documents:
the same documents match, and the seeds are the smallest literals."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.examples import examples
from thalabus_graph.plan.categories import VocabularyCheck
from thalabus_graph.plan.rewrite import filter_pattern, rewrite
from thalabus_graph.plan.seeds import (
    PairCounts,
    literal_count,
    ordered,
    ordered_conjunction,
    seed_count,
)
from thalabus_graph.plan.steps import CategoryPattern, FilterPattern
from thalabus_graph.query import parse

NAMES = ("A", "B", "C")
VALUES = ("x", "y", "z")
PAIRS = [(n, v) for n in NAMES for v in VALUES]
Document = frozenset[tuple[str, str]]

literals = st.builds(
    CategoryPattern, st.sampled_from(NAMES),
    st.lists(st.sampled_from(VALUES), min_size=1, max_size=2, unique=True).map(tuple),
    st.booleans())
conjunctions = st.lists(literals, min_size=1, max_size=5).map(tuple)
patterns = st.lists(conjunctions, min_size=1, max_size=4).map(
    lambda cs: FilterPattern("", (), False, tuple(cs)))
documents = st.lists(st.frozensets(st.sampled_from(PAIRS), max_size=4), max_size=12)


def _holds(literal: CategoryPattern, document: Document) -> bool:
    return any((literal.name, v) in document for v in literal.values) != literal.negated


def _matches(pattern: FilterPattern, document: Document) -> bool:
    return any(all(_holds(lit, document) for lit in conj) for conj in pattern.conjunctions)


def _counts(docs: list[Document], uncounted: frozenset[str]) -> dict[tuple[str, str], int]:
    """Each pair's documents, as the vocabulary read counts them; the names in ``uncounted``
    have none (a graph-defined category has no Category node)."""
    return {pair: sum(pair in d for d in docs) for pair in PAIRS if pair[0] not in uncounted}


@settings(max_examples=examples(400), deadline=None)
@given(patterns, documents, st.frozensets(st.sampled_from(NAMES), max_size=1))
def test_ordering_keeps_the_matches_and_starts_from_the_smallest_literal(
        pattern: FilterPattern, docs: list[Document], uncounted: frozenset[str]) -> None:
    counts = _counts(docs, uncounted)
    best = ordered(pattern, counts)
    # the same documents match: order within an AND and dropped empty conjunctions change
    # nothing
    assert [_matches(best, d) for d in docs] == [_matches(pattern, d) for d in docs]
    kept = iter(best.conjunctions)
    for conj in pattern.conjunctions:
        positive = [literal_count(lit, counts) for lit in conj if not lit.negated]
        if 0 in positive:  # a literal no document has: the conjunction is dropped
            assert not any(all(_holds(lit, d) for lit in conj) for d in docs)
            continue
        walked = next(kept)
        assert Counter(walked) == Counter(conj)  # a permutation of its literals
        _assert_walk_order(conj, walked, counts)
    assert next(kept, None) is None
    # the seeds: the count they give is no more than written order's, and bounds the matches
    written, smallest = seed_count(pattern, counts), seed_count(best, counts)
    if written is not None and smallest is not None:
        assert sum(_matches(pattern, d) for d in docs) <= smallest <= written


def _assert_walk_order(conj: tuple[CategoryPattern, ...], walked: tuple[CategoryPattern, ...],
                       counts: PairCounts) -> None:
    """Counted positive literals first by count then written place, uncounted positive ones
    next, negated last, each group in written order."""
    place = {id(lit): i for i, lit in enumerate(conj)}

    def key(lit: CategoryPattern) -> tuple[int, int, int]:
        n = None if lit.negated else literal_count(lit, counts)
        return (2 if lit.negated else 1 if n is None else 0, n or 0, place[id(lit)])

    assert [key(lit) for lit in walked] == sorted(key(lit) for lit in walked)


@given(patterns)
def test_nothing_counted_keeps_the_written_order(pattern: FilterPattern) -> None:
    assert ordered(pattern, {}) is pattern


def test_a_positive_literal_counted_zero_empties_its_conjunction() -> None:
    small, empty = CategoryPattern("A", ("x",)), CategoryPattern("A", ("nosuch",))
    counts = {("A", "x"): 3, ("A", "nosuch"): 0}
    assert ordered_conjunction((small, empty), counts) is None
    # a negated literal counted 0 holds for every document: no reason to drop
    assert ordered_conjunction((small, CategoryPattern("A", ("nosuch",), True)), counts) == (
        small, CategoryPattern("A", ("nosuch",), True))
    assert ordered(FilterPattern("", (), False, ((empty,),)), counts).conjunctions == ()
    assert seed_count(FilterPattern("", (), False, ()), counts) == 0


HELD = "SKEW=v10"
COUNTS = {("SKEW", "v50"): 100_000, ("SKEW", "v10"): 20_000}


def test_a_phrase_held_to_a_small_category_is_found_from_it() -> None:
    """``"p" AND SKEW=v50`` held to ``SKEW=v10``: the pushed pattern starts from v10, written
    first or not, and a pure filter of the two too."""
    node = parse(f'("p" AND SKEW=v50) AND ({HELD})')
    (written,) = rewrite(node).patterns
    assert isinstance(written, FilterPattern) and written.seeds() == [["SKEW", "v50"]]
    pushed = ordered(written, COUNTS)  # as the compiler pushes it
    assert pushed.seeds() == [["SKEW", "v10"]]
    (swapped,) = rewrite(parse(f'("p" AND {HELD}) AND (SKEW=v50)')).patterns
    assert isinstance(swapped, FilterPattern) and ordered(swapped, COUNTS) == pushed
    found = filter_pattern(parse(f"SKEW=v50 AND {HELD}"))
    assert found is not None
    stream = ordered(found, COUNTS)
    assert stream is not None and stream.seeds() == [["SKEW", "v10"]]


def test_the_read_counts_the_ordered_pattern_from_its_seeds() -> None:
    """The vocabulary read counts the pattern as written (its seed values' documents); the
    plan's ordered pattern gets its own seeds' count from the pairs' counts."""
    node = parse(f'("p" AND SKEW=v50) AND ({HELD})')
    (written,) = rewrite(node).patterns
    check = VocabularyCheck.of(node, patterns=[written])
    assert check is not None
    row = {"names": ["SKEW"], "pairs": [["SKEW", "v10"], ["SKEW", "v50"]],
           "sizes": {"documents": 200_000, "scope": 200_000}, "counts": [100_000],
           "pair_counts": [["SKEW", "v10", 20_000], ["SKEW", "v50", 100_000]]}
    reads = check.reads(row)
    assert isinstance(written, FilterPattern)
    pushed = ordered(written, reads.pair_counts)
    assert reads.counts == {written: 100_000, pushed: 20_000}
    # an exact count (the read walked the documents) is kept: no bound is lower
    assert check.reads({**row, "counts": [0]}).counts[pushed] == 0
