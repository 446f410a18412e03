"""The rewrites a query goes through once, before it is compiled: ``rewrite``.

``rewrite`` returns the query as the plan compiles it (``Rewritten``): each AND chain's
filters gathered into one side (``group_filters``), every subtree judged a pure filter or
not (``pure_filters``), and the patterns the plan will push into its phrases
(``push_decision``), so the vocabulary read can count them before the plan is made and the
compiler decides nothing twice.

Gathering an AND chain's filters.
The filters of an AND chain gathered into one side, so that the chain's first phrase runs
with all of them pushed into its searches.

A pure filter under an AND only removes documents: the AND keeps the scored side's fragments
of the common documents with their scores, and an AND of two scored sides combines
fragments of the same document. So ``"p" AND A AND NOT B``, parsed as
``("p" AND A) AND NOT B``, has the answer of ``"p" AND (A AND NOT B)``. The compiler pushes a
filter side into a phrase as a pattern only when the two are siblings: the first form lists
every document of ``NOT B`` (the universe minus B) and ships them as ids, the second checks
one pattern on the phrase's candidates (1.7 s against 0.25 s at 50,000 chapters).

``group_filters`` takes every pure-filter conjunct out of each maximal AND chain, combines
them in their order (left-associated) and ANDs them onto the chain's first scored conjunct.
That conjunct runs first, with the filters pushed into it (one pattern when it is a phrase)
instead of their documents listed, and the later scored conjuncts are restricted to its
documents, as before. Every search is restricted to the same documents as in the chain as
written, so the pools, and the answer, are the same. The scored conjuncts keep their own
structure: two scored sides combine by ``sqrt``, which is not associative.

A chain is returned as it is when its filters already are one side of its first scored
conjunct, and when a conjunct is mixed (an OR of a phrase and a filter): an AND judges such
a side by its result, a filter when it holds only stubs, and the filters applied to it
before it meets the other sides can empty it of scored fragments and flip that judgement.
The compiler does not regroup under branch reranking (``Compiler``'s ``group``), which
reranks each AND operand with its own clauses. Iterative: a 100,000-term chain neither
recurses nor revisits a node.

A filter spread over an OR of phrases (``distribute_filters``).
``("p" OR "q") AND F``, ``F`` a pure filter, keeps either phrase's fragments of ``F``'s
documents with their scores; so does ``("p" AND F) OR ("q" AND F)``: an AND with a pure filter
keeps its scored side's fragments of the common documents unchanged, an OR unions by id (the
higher score wins), and each phrase is searched within ``F`` either way, so the pools and the
answer are the same. Written as the first form, ``F``'s documents are listed and shipped to
every phrase as ids (a NOT: the universe less the excluded); in the second ``F`` is one pattern
each phrase's search checks, as for one phrase. A required filter is such an ``F``. Only over
an OR of phrases alone and for an ``F`` pushable as one pattern (``_spreadable``: no
graph-defined category, a normal form within bounds), each phrase with its own copy (the
compiler keeps one plan per node); not under branch reranking.

Pushed filters as one pattern.
A pure filter of categories as one pushed pattern: its disjunctive normal form.

An AND of a phrase and a filter made of category terms under AND / OR / NOT (``"p" AND
(A=x OR (B=y AND NOT A=z))``) is pushed into the phrase's searches as one ``FilterPattern``:
the statements check the DNF, passed as a list parameter, with list predicates, so neither
the filter's documents nor a NOT universe is listed. The DNF is computed bottom-up without
recursion, for each node and its negation at once (NOT swaps them); a filter whose DNF would
exceed ``MAX_CONJUNCTIONS`` conjunctions or ``MAX_LITERALS`` literals in one is not pushed
(the plan then ships the filter's document ids as before). Once the query's vocabulary read
has counted its category values (``pair_counts``), each conjunction's literals are ordered by
them, so the pattern is found from its smallest literals (``seeds.ordered``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

from thalabus_graph.plan.categories import VocabularyCheck
from thalabus_graph.plan.cost import check_limit
from thalabus_graph.plan.seeds import PairCounts
from thalabus_graph.plan.steps import CategoryPattern, FilterPattern
from thalabus_graph.query import (
    And,
    Category,
    Node,
    Not,
    Or,
    Semantic,
    Text,
    TrueNode,
    fold,
    walk,
)
from thalabus_graph.query import children as node_children
from thalabus_graph.settings import Settings


@dataclass(frozen=True)
class Rewritten:
    """A query as the plan compiles it.

    Attributes:
        root: the query, each AND chain's filters gathered when ``grouped``.
        pure: id(node) -> whether the subtree of ``root`` is a pure filter.
        patterns: every pattern the plan pushes into a phrase, each once.
        grouped: whether the AND chains were regrouped.
        defined: the graph-defined category names of the query: never pushed as a
            pattern (their documents are found by their own pattern and listed).
        pair_counts: the documents of each category value the query names, as its
            vocabulary read counted them (empty: not read yet), which order a filter
            pattern's literals (``seeds.ordered``).
    """

    root: Node
    pure: Mapping[int, bool]
    patterns: tuple[CategoryPattern, ...]
    grouped: bool
    defined: frozenset[str] = frozenset()
    pair_counts: PairCounts = field(default_factory=dict)


@dataclass(frozen=True)
class Prepared:
    """A query made ready to plan: rewritten once, its vocabulary check (None: no category
    and no scope, nothing to read) and its limit checked.

    Attributes:
        query: the rewritten query.
        check: the vocabulary read the plan's counts come from; it holds the scope in the
            form the statements take.
        limit: the results wanted (None: the configured pools).
    """

    query: Rewritten
    check: VocabularyCheck | None
    limit: int | None

    def knowing(self, defined: frozenset[str], pair_counts: PairCounts) -> Prepared:
        """The query knowing its graph-defined category names (never pushed as patterns:
        rewritten once more when they differ) and its values' counts (carried for the
        compiler, which orders a filter pattern's literals by them), with the same check and
        limit; itself when it knew them."""
        if self.query.defined == defined and self.query.pair_counts == pair_counts:
            return self
        if self.query.defined == defined:
            query = replace(self.query, pair_counts=dict(pair_counts))
        else:
            query = rewrite(self.query.root, grouped=self.query.grouped, defined=defined,
                            pair_counts=pair_counts)
        return Prepared(query, self.check, self.limit)

    @property
    def ontology_id(self) -> str | None:
        """The scope's ontology, in its identifier form (None: none)."""
        return None if self.check is None else self.check.ontology_id

    @property
    def datasetids(self) -> list[str] | None:
        """The scope's parent datasets (None: no dataset scope)."""
        if self.check is None or self.check.datasetids is None:
            return None
        return list(self.check.datasetids)


def prepare(node: Node, settings: Settings, *, ontology_id: str | None,
            datasetids: Sequence[str] | None, limit: object, grouped: bool,
            strict: bool, defined: frozenset[str] = frozenset(), quiet: bool = False
            ) -> Prepared:
    """``node`` ready to plan in its scope: rewritten (``rewrite``), with its vocabulary
    check (``VocabularyCheck.of``, which puts the scope in identifier form) and its limit
    checked (``cost.check_limit``). ``defined``: the query's graph-defined category names,
    known to the check and never pushed as patterns; ``quiet``: the check judges nothing.

    Raises:
        ConfigurationError: a bad limit, or a scope that is not an id or a list of ids.
    """
    rewritten = rewrite(node, grouped=grouped, defined=defined)
    check = VocabularyCheck.of(node, ontology_id, datasetids, rewritten.patterns,
                               strict=strict, quiet=quiet)
    return Prepared(rewritten, check, check_limit(limit, settings))


def rewrite(node: Node, *, grouped: bool = True, defined: frozenset[str] = frozenset(),
            pair_counts: PairCounts | None = None) -> Rewritten:
    """``node`` rewritten once for the compiler (``grouped``: gather the filters of each AND
    chain and spread a pushable filter over an OR of phrases (``distribute_filters``), as the
    compiled plan does unless branches are reranked one by one; ``defined``:
    the graph-defined category names, never pushed as patterns; ``pair_counts``: the
    documents of its category values, which order a filter pattern's literals)."""
    root = group_filters(node) if grouped else node
    pure = pure_filters(root)
    spreadable = _spreadable(root, pure, defined) if grouped else frozenset()
    if spreadable:
        root = distribute_filters(root, spreadable)
        pure = pure_filters(root)
    counts = dict(pair_counts or {})
    patterns: list[CategoryPattern] = []
    for kid in walk(root):
        if isinstance(kid, And):
            pattern = push_decision(kid, pure, defined)[1]
            if pattern is not None and pattern not in patterns:
                patterns.append(pattern)
    return Rewritten(root, pure, tuple(patterns), grouped, defined, counts)


def pure_filters(root: Node) -> dict[int, bool]:
    """id(node) -> whether the subtree is a pure filter, computed once, bottom-up."""
    out: dict[int, bool] = {}

    def step(node: Node, kids: tuple[bool, ...]) -> bool:
        value = (False if isinstance(node, Semantic | Text)
                 else True if isinstance(node, Not | Category | TrueNode) else all(kids))
        out[id(node)] = value
        return value

    fold(root, step)
    return out


def push_decision(node: And, pure: Mapping[int, bool], defined: frozenset[str] = frozenset()
                  ) -> tuple[bool, CategoryPattern | None]:
    """An AND's decision: whether its right side runs first (the filter side of a scored
    AND) and the pattern its filter side is pushed into its phrase as (None: not pushed; so
    is a side with a graph-defined category of ``defined``), in written order (the compiler
    orders a filter pattern's literals by the counts read, ``seeds.ordered``)."""
    swap = pure[id(node.right)] and not pure[id(node.left)]
    first, second = (node.right, node.left) if swap else (node.left, node.right)
    if not isinstance(second, Semantic | Text):
        return swap, None
    if defined and any(isinstance(n, Category) and n.name in defined for n in walk(first)):
        return swap, None
    return swap, _pattern_of(first, pure[id(first)])


def _spreadable(root: Node, pure: Mapping[int, bool], defined: frozenset[str]
                ) -> frozenset[int]:
    """ids of the AND sides beside an OR that the plan can push into a phrase as one pattern
    (a pure filter with no graph-defined category and a normal form within bounds): those
    ``distribute_filters`` may spread over the OR's phrases."""
    return frozenset(id(side) for n in walk(root) if isinstance(n, And)
                     for side, other in ((n.left, n.right), (n.right, n.left))
                     if isinstance(other, Or) and pure[id(side)]
                     and not (defined and any(isinstance(c, Category) and c.name in defined
                                              for c in walk(side)))
                     and _pattern_of(side, True) is not None)


def distribute_filters(root: Node, pushable: Collection[int]) -> Node:
    """``root`` with each AND of an OR of phrases and a filter among ``pushable`` (node ids of
    ``root``) rewritten as the OR of each phrase AND a copy of the filter, the filter on the
    side it was written on; ``root`` itself when there is none."""
    def step(node: Node, kids: tuple[Node, ...]) -> Node:
        same = all(a is b for a, b in zip(kids, node_children(node), strict=True))
        rebuilt = node if same else _with_children(node, kids)
        if isinstance(rebuilt, And):
            for phrases, side in ((rebuilt.left, rebuilt.right), (rebuilt.right, rebuilt.left)):
                if id(side) in pushable and isinstance(phrases, Or) and all(
                        isinstance(n, Or | Semantic | Text) for n in walk(phrases)):
                    return _spread(phrases, side, filter_right=side is rebuilt.right)
        return rebuilt

    return fold(root, step)


def _spread(phrases: Node, side: Node, *, filter_right: bool) -> Node:
    """The OR of ``phrases`` with each phrase ANDed with its own copy of ``side``."""
    def step(node: Node, kids: tuple[Node, ...]) -> Node:
        if kids:
            return Or(kids[0], kids[1])
        copy = fold(side, lambda n, k: _with_children(n, k) if k else replace(n))
        return And(node, copy) if filter_right else And(copy, node)

    return fold(phrases, step)


def _with_children(node: Node, kids: tuple[Node, ...]) -> Node:
    """An AND, OR or NOT like ``node`` over ``kids``."""
    if isinstance(node, Not):
        return Not(kids[0])
    return And(kids[0], kids[1]) if isinstance(node, And) else Or(kids[0], kids[1])


def _pattern_of(node: Node, pure: bool) -> CategoryPattern | None:
    """An AND's filter side as the pattern pushed into its phrase: a category or NOT a
    category as one ``CategoryPattern``, another filter of categories as a ``FilterPattern``
    (its normal form), else None (its documents are listed and shipped as ids)."""
    if isinstance(node, Category):
        return CategoryPattern(node.name, tuple(node.values))
    if isinstance(node, Not) and isinstance(node.operand, Category):
        return CategoryPattern(node.operand.name, tuple(node.operand.values), True)
    return filter_pattern(node) if pure else None


def group_filters(root: Node) -> Node:
    """``root`` with the pure-filter conjuncts of every AND chain gathered into one side
    of the chain's first scored conjunct (the answer is unchanged, see the module)."""
    kinds = _kinds(root)
    heads = _chain_heads(root)
    built: dict[int, Node] = {}
    for node in _postorder_heads(root, heads):
        built[id(node)] = _regroup(node, kinds, built)
    return built.get(id(root), root)


FILTER, SCORED, MIXED = "filter", "scored", "mixed"


def _kinds(root: Node) -> dict[int, str]:
    """id(node) -> what its result holds: ``FILTER`` (stubs only: no phrase outside a NOT),
    ``SCORED`` (scored fragments, or nothing: a phrase, an AND with a scored side, an OR of
    two scored sides) or ``MIXED`` (stubs beside scored fragments, or stubs alone when its
    phrases found nothing: an OR of a filter and a phrase)."""
    out: dict[int, str] = {}

    def kind(node: Node, kids: tuple[str, ...]) -> str:
        if isinstance(node, Semantic | Text):
            value = SCORED
        elif isinstance(node, Not | TrueNode) or all(k == FILTER for k in kids):
            value = FILTER
        elif (isinstance(node, And) and SCORED in kids) or all(k == SCORED for k in kids):
            value = SCORED
        else:
            value = MIXED
        out[id(node)] = value
        return value

    fold(root, kind)
    return out


def _chain_heads(root: Node) -> set[int]:
    """ids of the AND nodes that head a chain (their parent is not an AND)."""
    heads: set[int] = {id(root)} if isinstance(root, And) else set()
    for node in walk(root):
        for kid in node_children(node):
            if isinstance(kid, And) and not isinstance(node, And):
                heads.add(id(kid))
    return heads


def _postorder_heads(root: Node, heads: set[int]) -> list[Node]:
    """The nodes that may be rebuilt, children first: the chain heads and every node with a
    chain head below it, except the ANDs inside a chain (their head rebuilds them)."""
    order = list(walk(root))
    below: dict[int, bool] = {}
    for node in reversed(order):
        below[id(node)] = id(node) in heads or any(below[id(k)] for k in node_children(node))
    return [node for node in reversed(order) if below[id(node)]
            and (id(node) in heads or not isinstance(node, And))]


def _rebuilt(node: Node, built: dict[int, Node]) -> Node:
    return built.get(id(node), node)


def _regroup(node: Node, kinds: dict[int, str], built: dict[int, Node]) -> Node:
    """``node`` with its children as rebuilt, regrouped when it heads an AND chain."""
    if isinstance(node, Not):
        operand = _rebuilt(node.operand, built)
        return node if operand is node.operand else Not(operand)
    if isinstance(node, Or):
        left, right = _rebuilt(node.left, built), _rebuilt(node.right, built)
        return node if left is node.left and right is node.right else Or(left, right)
    if not isinstance(node, And):
        return node
    places = _places(node)
    filters = [c for c, _ in places if kinds[id(c)] == FILTER]
    first = next(((c, at) for c, at in places if kinds[id(c)] != FILTER), None)
    # a mixed conjunct is judged a filter or scored by its result, which the filters
    # applied to it change: its chain keeps its form
    if (not filters or first is None or any(kinds[id(c)] == MIXED for c, _ in places)
            or _grouped(node, kinds, first[0], len(filters))):
        return _same_shape(node, built, drop=frozenset())
    target, at = first
    combined = _rebuilt(filters[0], built)
    for extra in filters[1:]:
        combined = And(combined, _rebuilt(extra, built))
    return _same_shape(node, built, drop=frozenset(id(f) for f in filters),
                       attach=(at, And(_rebuilt(target, built), combined)))


def _grouped(head: And, kinds: dict[int, str], first: Node, filters: int) -> bool:
    """Whether the chain's filters already are one side of an AND whose other side is its
    first scored conjunct."""
    stack: list[Node] = [head]
    while stack:
        node = stack.pop()
        if not isinstance(node, And):
            continue
        for own, other in ((node.left, node.right), (node.right, node.left)):
            if own is first and kinds[id(other)] == FILTER:
                return len(_conjuncts(other)) == filters
        stack.extend((node.left, node.right))
    return False


def _conjuncts(head: Node) -> list[Node]:
    """The chain's conjuncts (its non-AND members), left to right."""
    return [c for c, _ in _places(head)] if isinstance(head, And) else [head]


def _places(head: And) -> list[tuple[Node, tuple[int, int]]]:
    """The chain's conjuncts, left to right, each with its place: (id of its AND, side)."""
    out: list[tuple[Node, tuple[int, int]]] = []
    stack: list[tuple[And, int, Node]] = [(head, 1, head.right), (head, 0, head.left)]
    while stack:
        parent, side, node = stack.pop()
        if isinstance(node, And):
            stack.append((node, 1, node.right))
            stack.append((node, 0, node.left))
        else:
            out.append((node, (id(parent), side)))
    return out


def _same_shape(head: And, built: dict[int, Node], *, drop: frozenset[int],
                attach: tuple[tuple[int, int], Node] | None = None) -> Node:
    """The chain rebuilt with its shape: conjuncts in ``drop`` removed (an AND left with
    one side becomes that side), the conjunct at ``attach``'s place (id of its AND, side)
    replaced by its node, the others rebuilt."""
    result: dict[int, Node | None] = {}
    stack: list[tuple[And, bool]] = [(head, False)]
    while stack:
        node, expanded = stack.pop()
        if not expanded:
            stack.append((node, True))
            stack.extend((kid, False) for kid in (node.right, node.left)
                         if isinstance(kid, And))
            continue
        sides: list[Node] = []
        for index, kid in enumerate((node.left, node.right)):
            side: Node | None
            if isinstance(kid, And):
                side = result[id(kid)]
            elif attach is not None and attach[0] == (id(node), index):
                side = attach[1]
            elif id(kid) in drop:
                side = None
            else:
                side = _rebuilt(kid, built)
            if side is not None:
                sides.append(side)
        if len(sides) == 2:
            left, right = sides
            same = left is node.left and right is node.right
            result[id(node)] = node if same else And(left, right)
        else:
            result[id(node)] = sides[0] if sides else None
    out = result[id(head)]
    assert out is not None, "a chain keeps at least one scored conjunct"
    return out


MAX_CONJUNCTIONS = 32
MAX_LITERALS = 16

Dnf = tuple[tuple[CategoryPattern, ...], ...]
"""Conjunctions of literals; () is FALSE, ((),) is TRUE."""
_Both = tuple[Dnf | None, Dnf | None] | None
"""A node's DNF and its negation's (each None when too large), or None when the subtree is
not made of category terms only."""


def filter_pattern(node: Node, defined: frozenset[str] = frozenset()) -> FilterPattern | None:
    """``node`` as one pushed filter pattern, or None when it is not made of stored
    category terms only (``defined``: the graph-defined names), is TRUE, or is too large in
    normal form; each conjunction's literals in written order (``seeds.ordered`` orders
    them by the counts read)."""
    if defined and any(isinstance(n, Category) and n.name in defined for n in walk(node)):
        return None
    both = fold(node, _step)
    if both is None or both[0] is None or both[0] == ((),):
        return None
    return FilterPattern("", (), False, both[0])


def _step(node: Node, kids: tuple[_Both, ...]) -> _Both:
    parts = [kid for kid in kids if kid is not None]
    if len(parts) < len(kids):
        return None
    if isinstance(node, Category):
        values = tuple(node.values)
        return (((CategoryPattern(node.name, values),),),
                ((CategoryPattern(node.name, values, True),),))
    if isinstance(node, TrueNode):
        return ((),), ()
    if isinstance(node, Not):
        return parts[0][1], parts[0][0]
    if isinstance(node, And):
        (a_pos, a_neg), (b_pos, b_neg) = parts
        return _product(a_pos, b_pos), _sum(a_neg, b_neg)
    if isinstance(node, Or):
        (a_pos, a_neg), (b_pos, b_neg) = parts
        return _sum(a_pos, b_pos), _product(a_neg, b_neg)
    return None  # a phrase: not a category filter


def _product(a: Dnf | None, b: Dnf | None) -> Dnf | None:
    if a is None or b is None or len(a) * len(b) > MAX_CONJUNCTIONS:
        return None
    out = tuple(x + y for x in a for y in b)
    return None if any(len(c) > MAX_LITERALS for c in out) else out


def _sum(a: Dnf | None, b: Dnf | None) -> Dnf | None:
    if a is None or b is None or len(a) + len(b) > MAX_CONJUNCTIONS:
        return None
    return a + b
