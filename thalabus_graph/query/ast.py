"""Immutable AST nodes of the Thalabus query language and iterative tree helpers.

Nodes are frozen dataclasses; equality, hashing, ``repr``, ``to_dict`` and ``from_dict`` never
recurse in Python, so trees thousands of levels deep (``"a" AND "b" AND ...``) are safe.

What is and is not depth-safe: construction, ``==``, ``hash``, ``repr``, ``to_dict``,
``from_dict``, ``copy.copy``/``copy.deepcopy`` (they return the node itself), ``pickle`` (a node
pickles as its canonical text), :func:`walk`, :func:`walk_postorder`, :func:`fold`,
:func:`depth` and everything in ``parser``, ``serialize`` and ``clauses`` are iterative. The
standard library's ``json.dumps(node.to_dict())`` recurses and fails a few thousand levels down:
use :func:`thalabus_graph.query.serialize.to_json` for deep trees.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias, TypeVar, overload

from thalabus_graph.errors import ConfigurationError, QueryNodeError, QueryNodeTypeError

T = TypeVar("T")

NAME_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""A category name (and a document property name, `ingest/fields.py`): an ASCII identifier."""


class _NodeBase:
    """Shared behaviour of every node: cached hash, iterative ``==``, ``repr`` and ``to_dict``."""

    __slots__ = ("_hash",)
    _hash: int
    TYPE: ClassVar[str]
    __match_args__: ClassVar[tuple[str, ...]]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _NodeBase):
            return NotImplemented
        stack: list[tuple[_NodeBase, _NodeBase]] = [(self, other)]
        while stack:
            a, b = stack.pop()
            if a is b:
                continue
            if type(a) is not type(b) or a._hash != b._hash:
                return False
            if isinstance(a, And | Or):
                assert isinstance(b, And | Or)
                stack.append((a.right, b.right))
                stack.append((a.left, b.left))
            elif isinstance(a, Not):
                assert isinstance(b, Not)
                stack.append((a.operand, b.operand))
            elif _leaf_key(a) != _leaf_key(b):  # type: ignore[arg-type]
                return False
        return True

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        out: list[str] = []
        stack: list[str | _NodeBase] = [self]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, And | Or):
                name = type(item).__name__
                stack.extend([")", item.right, ", right=", item.left, f"{name}(left="])
            elif isinstance(item, Not):
                stack.extend([")", item.operand, "Not(operand="])
            elif isinstance(item, Semantic):
                out.append(f"Semantic(text={item.text!r})")
            elif isinstance(item, Text):
                out.append(f"Text(text={item.text!r}, case_sensitive={item.case_sensitive!r})")
            elif isinstance(item, Category):
                out.append(f"Category(name={item.name!r}, values={item.values!r})")
            else:
                out.append("TrueNode()")
        return "".join(out)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form of docs/architecture.md, "Query language" (plain dicts, lists, strings,
        bools)."""
        return fold(self, _to_dict_step)  # type: ignore[arg-type]

    def __copy__(self) -> _NodeBase:
        return self  # immutable: a copy may be the node itself

    def __deepcopy__(self, memo: dict[int, Any]) -> _NodeBase:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as the canonical query text: flat, so deep trees pickle without recursion."""
        from thalabus_graph.query.serialize import serialize

        try:
            return (_from_text, (serialize(self),))  # type: ignore[arg-type]
        except ValueError:  # a TRUE inside a tree has no text: pickle the fields instead
            return (type(self), tuple(getattr(self, name) for name in self.__match_args__))


def _from_text(text: str) -> Node:
    """Unpickle a node from its canonical text."""
    from thalabus_graph.query.parser import parse

    return parse(text)


LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""A UTF-16 surrogate on its own: not valid Unicode text (cannot be encoded as UTF-8)."""


def blank(text: str) -> bool:
    """Whether ``text`` holds nothing to search: only whitespace and invisible format
    characters (a zero-width space, a BOM, a soft hyphen, a direction mark: Unicode category
    Cf), which no analyzer keeps and an embedder reads as noise."""
    return all(ch.isspace() or unicodedata.category(ch) == "Cf" for ch in text)


def _check_unicode(what: str, text: str) -> None:
    bad = LONE_SURROGATE.search(text)
    if bad is not None:
        raise QueryNodeError(f"{what} holds a lone surrogate (U+{ord(bad.group()):04X} at "
                             f"character {bad.start() + 1}), which is not valid Unicode text")


def _check_phrase(kind: str, text: object) -> str:
    if not isinstance(text, str):
        raise QueryNodeTypeError(f"{kind} text must be a str, not {type(text).__name__}")
    if blank(text):
        raise QueryNodeError(f"{kind} text must not be empty or blank")
    _check_unicode(f"{kind} text", text)
    return nfc(text)


def nfc(text: str) -> str:
    """``text`` in Unicode normal form C: the form every phrase, text term and category value
    is compared, embedded and stored in (an NFD ``café`` and an NFC ``café`` are one word)."""
    return unicodedata.normalize("NFC", text)


@overload
def id_form(text: str) -> str: ...
@overload
def id_form(text: None) -> None: ...
def id_form(text: str | None) -> str | None:
    """An identifier in the one form it is stored and asked in: Unicode normal form KC.

    Identifiers are category values and ontology ids, which are matched exactly (a text
    search matches words; an identifier matches or not). NFKC, not NFC as for text: a
    ligature ``ﬁnance``, a full-width ``DE`` (U+FF24 U+FF25) and a decomposed ``café`` are
    typed, pasted and converted from PDFs by people who mean ``finance``, ``DE`` and
    ``café``, and no one means two different identifiers by them. Ingest stores this form
    (``ingest.fields``) and every query asks in it, so the two always agree. A graph ingested
    before identifiers took this form holds NFC values: a value whose NFC and NFKC forms
    differ (ligatures, full-width or superscript characters) is found again after its
    documents are ingested again.
    """
    return None if text is None else unicodedata.normalize("NFKC", text)


def id_list(ids: str | Iterable[str] | None, what: str = "ids") -> list[str] | None:
    """A list of ids as the API takes it (the parent datasets of a scope, members to hide):
    a lone ``str`` is one id, not its characters (``subset_of_datasetids="s#dataset_1"``
    means that dataset); None stays None (no such scope).

    Raises:
        ConfigurationError: an item that is not a string, or ``ids`` not iterable.
    """
    if ids is None:
        return None
    if isinstance(ids, str):
        return [ids]
    try:
        out = list(ids)
    except TypeError:
        raise ConfigurationError(f"{what} must be a string or a list of strings, not "
                                 f"{type(ids).__name__}") from None
    for item in out:
        if not isinstance(item, str):
            raise ConfigurationError(f"{what} must be strings, not {type(item).__name__}")
    return out


def _check_child(kind: str, child: object) -> _NodeBase:
    if not isinstance(child, _NodeBase):
        raise QueryNodeTypeError(f"{kind} operands must be query nodes, not {type(child).__name__}")
    return child


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Semantic(_NodeBase):
    """A double-quoted phrase, searched by meaning.

    Example:
        >>> Semantic("kitchen floor").to_dict()
        {'type': 'SEMANTIC', 'text': 'kitchen floor'}
    """

    TYPE: ClassVar[str] = "SEMANTIC"
    text: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", _check_phrase("SEMANTIC", self.text))
        object.__setattr__(self, "_hash", hash(("SEMANTIC", self.text)))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Text(_NodeBase):
    """A single-quoted full-text term; ``@'...'`` makes it case-sensitive.

    Example:
        >>> Text("Jane's", case_sensitive=True).to_dict()["case_sensitive"]
        True
    """

    TYPE: ClassVar[str] = "TEXT"
    text: str
    case_sensitive: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", _check_phrase("TEXT", self.text))
        if not isinstance(self.case_sensitive, bool):
            raise QueryNodeTypeError("TEXT case_sensitive must be a bool")
        object.__setattr__(self, "_hash", hash(("TEXT", self.text, self.case_sensitive)))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Category(_NodeBase):
    """``NAME=VALUE,VALUE``: documents having any of the values for that category name.

    Example:
        >>> Category("COUNTRY_OF_ORIGIN", ("IQ", "SY")).values
        ('IQ', 'SY')
    """

    TYPE: ClassVar[str] = "CATEGORY"
    name: str
    values: tuple[str, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not NAME_PATTERN.fullmatch(self.name):
            raise QueryNodeError(f"category name must match [A-Za-z_][A-Za-z0-9_]*: {self.name!r}")
        if isinstance(self.values, str):
            raise QueryNodeTypeError("category values must be a sequence of str, not a str")
        values = tuple(self.values)
        if not values:
            raise QueryNodeError("a category needs at least one value")
        for value in values:
            if not isinstance(value, str):
                raise QueryNodeTypeError(f"category values must be str, not {type(value).__name__}")
            if blank(value):
                raise QueryNodeError("category values must not be empty or blank")
            _check_unicode("a category value", value)
        values = tuple(id_form(value) for value in values)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "_hash", hash(("CATEGORY", self.name, values)))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class And(_NodeBase):
    """Both sides must hold (documents present on both sides)."""

    TYPE: ClassVar[str] = "AND"
    left: Node
    right: Node

    def __post_init__(self) -> None:
        left = _check_child("AND", self.left)
        right = _check_child("AND", self.right)
        object.__setattr__(self, "_hash", hash(("AND", left._hash, right._hash)))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Or(_NodeBase):
    """Either side may hold (union by fragment id)."""

    TYPE: ClassVar[str] = "OR"
    left: Node
    right: Node

    def __post_init__(self) -> None:
        left = _check_child("OR", self.left)
        right = _check_child("OR", self.right)
        object.__setattr__(self, "_hash", hash(("OR", left._hash, right._hash)))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Not(_NodeBase):
    """The universe's documents without those matching the operand (yields stubs)."""

    TYPE: ClassVar[str] = "NOT"
    operand: Node

    def __post_init__(self) -> None:
        operand = _check_child("NOT", self.operand)
        object.__setattr__(self, "_hash", hash(("NOT", operand._hash)))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class TrueNode(_NodeBase):
    """No constraint: the value of an empty or blank query."""

    TYPE: ClassVar[str] = "TRUE"

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash(("TRUE",)))


Node: TypeAlias = Semantic | Text | Category | And | Or | Not | TrueNode
"""Any query node."""

Leaf: TypeAlias = Semantic | Text | Category | TrueNode
"""A node without children."""

TRUE = TrueNode()
"""The shared TRUE node (any ``TrueNode()`` compares equal to it)."""

def _leaf_key(node: Leaf) -> tuple[object, ...]:
    if isinstance(node, Semantic):
        return (node.text,)
    if isinstance(node, Text):
        return (node.text, node.case_sensitive)
    if isinstance(node, Category):
        return (node.name, node.values)
    return ()


def children(node: Node) -> tuple[Node, ...]:
    """The direct children of a node, left to right."""
    if isinstance(node, And | Or):
        return (node.left, node.right)
    if isinstance(node, Not):
        return (node.operand,)
    return ()


def walk(node: Node) -> Iterator[Node]:
    """Every node in pre-order (parent first, then left before right), iteratively."""
    stack: list[Node] = [node]
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, And | Or):
            stack.append(current.right)
            stack.append(current.left)
        elif isinstance(current, Not):
            stack.append(current.operand)


def walk_postorder(node: Node) -> Iterator[Node]:
    """Every node in post-order (children left to right, then the parent), iteratively."""
    stack: list[tuple[Node, bool]] = [(node, False)]
    while stack:
        current, expanded = stack.pop()
        kids = children(current)
        if expanded or not kids:
            yield current
            continue
        stack.append((current, True))
        stack.extend((kid, False) for kid in reversed(kids))


def fold(node: Node, combine: Callable[[Node, tuple[T, ...]], T]) -> T:
    """Evaluate a tree bottom-up without recursion.

    ``combine(node, results)`` gets the results of the node's children (left to right) and
    returns the node's result; leaves get ``()``. This is the shape an evaluator takes.

    Example:
        >>> fold(And(Semantic("a"), Not(Semantic("b"))), lambda n, kids: 1 + max(kids, default=0))
        3
    """
    results: list[T] = []
    for current in walk_postorder(node):
        count = len(children(current))
        if count:
            args = tuple(results[-count:])
            del results[-count:]
        else:
            args = ()
        results.append(combine(current, args))
    return results[0]


def depth(node: Node) -> int:
    """The number of nodes on the longest root-to-leaf path (a leaf has depth 1)."""
    return fold(node, lambda _n, kids: 1 + max(kids, default=0))


def _to_dict_step(node: Node, kids: tuple[dict[str, Any], ...]) -> dict[str, Any]:
    if isinstance(node, Semantic):
        return {"type": "SEMANTIC", "text": node.text}
    if isinstance(node, Text):
        return {"type": "TEXT", "text": node.text, "case_sensitive": node.case_sensitive}
    if isinstance(node, Category):
        return {"type": "CATEGORY", "name": node.name, "values": list(node.values)}
    if isinstance(node, And | Or):
        return {"type": node.TYPE, "left": kids[0], "right": kids[1]}
    if isinstance(node, Not):
        return {"type": "NOT", "operand": kids[0]}
    return {"type": "TRUE"}


def from_dict(data: Mapping[str, Any]) -> Node:
    """Build a node from its JSON form (the inverse of ``to_dict``), iteratively.

    Raises:
        QueryNodeError: the mapping is not a valid node (unknown type, missing or wrong
            fields); a ``ValueError`` too.
        QueryNodeTypeError: a field has the wrong type; a ``TypeError`` too.
    """
    results: list[Node] = []
    stack: list[tuple[Any, bool]] = [(data, False)]
    while stack:
        item, expanded = stack.pop()
        if not isinstance(item, Mapping):
            raise QueryNodeTypeError(f"a query node must be a mapping, not {type(item).__name__}")
        kind = item.get("type")
        try:
            if kind in ("AND", "OR"):
                if not expanded:
                    stack.append((item, True))
                    stack.append((item["right"], False))
                    stack.append((item["left"], False))
                    continue
                right = results.pop()
                left = results.pop()
                results.append(And(left, right) if kind == "AND" else Or(left, right))
            elif kind == "NOT":
                if not expanded:
                    stack.append((item, True))
                    stack.append((item["operand"], False))
                    continue
                results.append(Not(results.pop()))
            elif kind == "SEMANTIC":
                results.append(Semantic(item["text"]))
            elif kind == "TEXT":
                results.append(Text(item["text"], item.get("case_sensitive", False)))
            elif kind == "CATEGORY":
                values = item["values"]
                if isinstance(values, str) or not isinstance(values, list | tuple):
                    raise QueryNodeTypeError("CATEGORY values must be a list of str")
                results.append(Category(item["name"], tuple(values)))
            elif kind == "TRUE":
                results.append(TRUE)
            else:
                raise QueryNodeError(f"unknown query node type {kind!r}")
        except KeyError as exc:
            raise QueryNodeError(f"{kind} node is missing the field {exc.args[0]!r}") from None
    return results[0]
