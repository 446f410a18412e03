"""The filters of an AND chain gathered into one side (``plan.rewrite.group_filters``) and a
filter distributed over an OR of phrases (``distribute_filters``): the same answer under the
combination rules, in the form the compiler pushes as one pattern, and linear on long
chains."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.spies import count_calls
from thalabus_graph.fragments import (
    Fragment,
    combine_and,
    combine_not,
    combine_or,
    document_id_of,
    stub,
)
from thalabus_graph.plan.rewrite import group_filters, rewrite
from thalabus_graph.query import (
    And,
    Category,
    Node,
    Not,
    Or,
    Semantic,
    children,
    fold,
    parse,
    serialize,
    walk,
)

DOCUMENTS = [f"d{i}" for i in range(6)]
PHRASES = ["a", "b", "c"]
CATEGORIES = [Category("K", (v,)) for v in ("1", "2", "3")]

leaves = st.sampled_from([Semantic(p) for p in PHRASES] + CATEGORIES)
trees = st.recursive(
    leaves,
    lambda kids: st.one_of(st.builds(And, kids, kids), st.builds(Or, kids, kids),
                           st.builds(Not, kids)),
    max_leaves=9)
fragments = st.lists(
    st.tuples(st.sampled_from(DOCUMENTS), st.integers(0, 2),
              st.floats(0.01, 1.0, allow_nan=False)), max_size=8)
memberships = st.lists(st.sampled_from(DOCUMENTS), unique=True)


def evaluate(node: Node, hits: dict[str, list[Fragment]],
             members: dict[str, list[str]]) -> list[Fragment]:
    """The reference rules, bottom-up, each side judged by its whole result."""
    universe = [stub(d) for d in DOCUMENTS]

    def step(n: Node, kids: tuple[list[Fragment], ...]) -> list[Fragment]:
        if isinstance(n, Semantic):
            return hits[n.text]
        if isinstance(n, Category):
            return [stub(d) for d in sorted(members[n.values[0]])]
        if isinstance(n, Not):
            return combine_not(universe, kids[0])
        if isinstance(n, And):
            return combine_and(*kids)
        assert isinstance(n, Or)
        return combine_or(*kids)

    return fold(node, step)


def phrase_hits(drawn: list[tuple[str, int, float]], phrase: str) -> list[Fragment]:
    best: dict[str, Fragment] = {}
    for doc, part, score in drawn:
        fid = f"{doc}-c{part}"
        assert document_id_of(fid) == doc
        best.setdefault(fid, Fragment(fid, doc, "t", score, "chapters",
                                      (f"semantic:{phrase}",)))
    return combine_or(list(best.values()), [])


@settings(max_examples=1500, deadline=None)
@given(trees, st.tuples(fragments, fragments, fragments),
       st.tuples(memberships, memberships, memberships))
def test_the_answer_is_the_same(tree: Node, drawn: tuple[list[tuple[str, int, float]], ...],
                                cats: tuple[list[str], ...]) -> None:
    hits = {p: phrase_hits(d, p) for p, d in zip(PHRASES, drawn, strict=True)}
    members = {c.values[0]: m for c, m in zip(CATEGORIES, cats, strict=True)}
    assert evaluate(group_filters(tree), hits, members) == evaluate(tree, hits, members)


@settings(max_examples=1500, deadline=None)
@given(trees, st.tuples(fragments, fragments, fragments),
       st.tuples(memberships, memberships, memberships))
def test_the_rewritten_query_has_the_same_answer(
        tree: Node, drawn: tuple[list[tuple[str, int, float]], ...],
        cats: tuple[list[str], ...]) -> None:
    hits = {p: phrase_hits(d, p) for p, d in zip(PHRASES, drawn, strict=True)}
    members = {c.values[0]: m for c, m in zip(CATEGORIES, cats, strict=True)}
    assert evaluate(rewrite(tree).root, hits, members) == evaluate(tree, hits, members)


def test_a_filter_over_an_or_of_phrases_is_pushed_into_each_phrase() -> None:
    done = rewrite(parse('("a" OR ("b" OR \'c\')) AND NOT K=1 AND K=2'))
    assert serialize(done.root) == ('"a" AND (NOT K=1 AND K=2) OR ("b" AND (NOT K=1 AND K=2) '
                                    "OR 'c' AND (NOT K=1 AND K=2))")  # the ORs as written
    assert len(done.patterns) == 1  # one pattern, pushed into all three phrases
    copies = [n for n in walk(done.root) if isinstance(n, Category) and n.values == ("2",)]
    assert len(copies) == 3 and len({id(n) for n in copies}) == 3  # a tree per phrase
    required = rewrite(parse('K=3 AND ("a" OR "b")'))
    assert serialize(required.root) == 'K=3 AND "a" OR K=3 AND "b"'


def test_a_filter_stays_over_an_or_that_is_not_phrases_alone() -> None:
    for query in ('("a" OR K=1) AND K=2', '("a" OR "b" AND "c") AND K=2',
                  '("a" OR "b") AND ("c" OR K=1)'):
        assert serialize(rewrite(parse(query)).root) == serialize(
            group_filters(parse(query))), query
    ungrouped = parse('("a" OR "b") AND K=2')
    assert rewrite(ungrouped, grouped=False).root is ungrouped  # branch reranking
    defined = rewrite(ungrouped, defined=frozenset({"K"}))
    assert serialize(defined.root) == '("a" OR "b") AND K=2' and not defined.patterns


def _pure(node: Node) -> bool:
    """No phrase outside a NOT: the subtree yields stubs only."""
    return fold(node, lambda n, kids: not isinstance(n, Semantic)
                and (isinstance(n, Not) or all(kids)))


def _scored(node: Node) -> bool:
    """Scored fragments or nothing: a phrase, an AND with such a side, an OR of two."""
    return fold(node, lambda n, kids: isinstance(n, Semantic)
                or (isinstance(n, And) and any(kids)) or (isinstance(n, Or) and all(kids)))


def _mixed(node: Node) -> bool:
    """Neither: stubs beside scored fragments, or stubs alone when its phrases found none."""
    return not _pure(node) and not _scored(node)


def _left_to_right(head: And) -> list[Node]:
    """The conjuncts of the chain under ``head``, left to right."""
    out: list[Node] = []
    stack: list[Node] = [head]
    while stack:
        node = stack.pop()
        if isinstance(node, And):
            stack.extend((node.right, node.left))
        else:
            out.append(node)
    return out


def _chains(root: Node) -> list[list[And]]:
    """The AND nodes of every maximal chain."""
    heads = [n for n in walk(root) if isinstance(n, And)]
    inner = {id(k) for n in walk(root) if isinstance(n, And)
             for k in children(n) if isinstance(k, And)}
    out = []
    for head in heads:
        if id(head) in inner:
            continue
        chain, stack = [], [head]
        while stack:
            node = stack.pop()
            if isinstance(node, And):
                chain.append(node)
                stack.extend(children(node))
        out.append(chain)
    return out


@settings(max_examples=1000, deadline=None)
@given(trees)
def test_each_chain_has_its_filters_in_one_place_and_regrouping_again_changes_nothing(
        tree: Node) -> None:
    grouped = group_filters(tree)
    for chain in _chains(grouped):
        if any(_mixed(c) for c in _left_to_right(chain[0])):
            continue  # judged by its result: the chain keeps its form
        places = [(n, k) for n in chain if not _pure(n) for k in children(n) if _pure(k)]
        assert len(places) <= 1, serialize(grouped)
        if places:  # beside the chain's first scored conjunct, the one that runs first
            holder, group = places[0]
            other = holder.right if group is holder.left else holder.left
            first = next(c for c in _left_to_right(chain[0]) if not _pure(c))
            assert other is first, serialize(grouped)
    assert serialize(group_filters(grouped)) == serialize(grouped)


def test_a_chain_is_regrouped_onto_its_first_phrase() -> None:
    cases = {
        '"p" AND A=1 AND NOT B=2': '"p" AND (A=1 AND NOT B=2)',
        '"p" AND "q" AND NOT B=2': '"p" AND NOT B=2 AND "q"',
        '"p" AND A=1 AND "q" AND B=2': '"p" AND (A=1 AND B=2) AND "q"',
        '("p" OR "q") AND A=1 AND B=2': '("p" OR "q") AND (A=1 AND B=2)',
        'NOT ("q" AND A=1 AND B=2)': 'NOT ("q" AND (A=1 AND B=2))',
    }
    for query, grouped in cases.items():
        assert serialize(group_filters(parse(query))) == grouped


def test_a_chain_already_in_that_form_is_returned_as_it_is() -> None:
    for query in ('"p" AND (A=1 AND NOT B=2)', 'A=1 AND NOT B=2 AND "p"', '"p" AND A=1',
                  'A=1 AND "p" AND "q"', "A=1 AND B=2", '"p" OR "q"',
                  '("p" OR C=3) AND A=1 AND B=2', '"p" AND ("q" OR C=3) AND A=1'):
        root = parse(query)
        assert group_filters(root) is root


def _chain(terms: int) -> Node:
    root: Node = Semantic("p")
    for i in range(terms):
        root = And(root, Category("K", (str(i),)))
    return root


def test_a_chain_is_regrouped_with_work_linear_in_its_terms() -> None:
    small, large = _chain(2_000), _chain(20_000)
    calls = count_calls(lambda: group_filters(small)), count_calls(lambda: group_filters(large))
    assert calls[1] <= calls[0] * 10 * 1.05  # ten times the terms, ten times the calls


def test_a_100000_term_chain_is_regrouped_without_recursion() -> None:
    grouped = group_filters(_chain(100_000))
    assert isinstance(grouped, And) and isinstance(grouped.left, Semantic)
    assert sum(isinstance(n, Category) for n in walk(grouped.right)) == 100_000
