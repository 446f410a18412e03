"""The filters of an AND chain gathered into one side, so that the chain's first phrase runs
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
"""

from __future__ import annotations

from thalabus_graph.query import And, Node, Not, Or, Semantic, Text, TrueNode, fold, walk
from thalabus_graph.query import children as node_children


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
