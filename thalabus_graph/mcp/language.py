"""The query language and the tools, described for an LLM that has to write queries.

The rules go into the ``query`` and ``explain`` tool descriptions, so a model reads them with
examples before its first call. The examples are made of the graph's own vocabulary (its
category names and values, its keywords: ``Sample.of``), so an agent never copies a category
another corpus has; on an empty graph they use placeholders (``NEUTRAL``). Every example is
built as a syntax tree and written by the serializer, so each one parses (a test checks it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from thalabus_graph.engine import ThalabusGraph
from thalabus_graph.errors import QueryNodeError, QueryNodeTypeError
from thalabus_graph.query import And, Category, Node, Not, Or, Semantic, Text, serialize
from thalabus_graph.query.serialize import leaf_text

EXAMPLE_TERM_CHARS = 40
"""Longest keyword or category value an example quotes."""


@dataclass(frozen=True)
class Sample:
    """What the examples are made of: two categories (a name and one or two values each), a
    phrase searched by meaning and a word searched as text."""

    first: Category
    second: Category
    phrase: str
    word: str

    @classmethod
    def of(cls, categories: Sequence[tuple[str, Sequence[str]]],
           keywords: Sequence[str]) -> Sample:
        """The sample from a graph's vocabulary: ``categories`` as (name, values), most used
        first; ``keywords`` short keyword texts. What the graph lacks comes from ``NEUTRAL``."""
        usable: list[Category] = []
        for name, values in categories:
            category = _category(name, values)
            if category is not None:
                usable.append(category)
        terms = [k for k in keywords if _usable_term(k)]
        words = [k for k in terms if " " not in k.strip()]
        first = usable[0] if usable else NEUTRAL.first
        if len(usable) > 1:
            second = Category(usable[1].name, usable[1].values[:1])
        elif usable and len(first.values) > 1:
            second = Category(first.name, first.values[1:2])
        else:
            second = NEUTRAL.second if not usable else Category(first.name, first.values[:1])
        phrase = next((k for k in terms if " " in k.strip()), terms[0] if terms else
                      NEUTRAL.phrase)
        word = words[0] if words else (terms[-1] if terms else NEUTRAL.word)
        return cls(first, second, phrase.strip(), word.strip())

    def examples(self) -> tuple[str, ...]:
        """The example queries, each one canonical text that parses."""
        one = Category(self.first.name, self.first.values[:1])
        trees: list[Node] = [
            And(Semantic(self.phrase), one),
            And(Or(Semantic(self.phrase), Text(self.word)), Not(self.second)),
            And(Text(self.word), self.first),
            And(one, Not(self.second)),
            Text(self.word, case_sensitive=True),
            Text("Jane's"),
        ]
        return tuple(serialize(tree) for tree in trees)

    def rules(self) -> str:
        """The rules of the language with this sample's terms, then its examples."""
        examples = "\n".join(f"  {example}" for example in self.examples())
        return f"""\
Thalabus query language (boolean retrieval over meaning, text and categories):
- "double quotes" search by MEANING (semantic vector search): {leaf_text(Semantic(self.phrase))}.
- 'single quotes' search the TEXT (full-text, case-insensitive): {leaf_text(Text(self.word))}.
  @'...' is case-sensitive text: {leaf_text(Text(self.word, case_sensitive=True))}.
- NAME=VALUE filters by a document category; several values mean any of them:
  {leaf_text(self.first)}. Quote a value with spaces: NAME='two words'.
- The `categories` tool lists this graph's category names and values (and its ontologies).
- Combine with AND, OR, NOT (any letter case) and parentheses. NOT binds tighter than AND,
  AND tighter than OR. Two terms side by side need an operator between them.
- A bare word is an ERROR: write "cat" (meaning) or 'cat' (text), never cat.
- Inside quotes, escape the same quote with a backslash: 'Jane\\'s'.
- Category names and values must exist in the graph; an unknown one is reported with a
  "did you mean" suggestion.
Examples:
{examples}"""


def _usable_term(text: str) -> bool:
    """Whether a stored text can be quoted in a description: short, one printable line."""
    text = text.strip()
    return 0 < len(text) <= EXAMPLE_TERM_CHARS and text.isprintable()


def _category(name: str, values: Sequence[str]) -> Category | None:
    """``name`` with its first two usable values as a query term; None when the name cannot
    be written in a query (``NAME_PATTERN``) or no value is usable."""
    kept = [v for v in values if _usable_term(v)][:2]
    if not kept:
        return None
    try:
        return Category(name, tuple(kept))
    except (QueryNodeError, QueryNodeTypeError):
        return None


NEUTRAL = Sample(Category("CATEGORY", ("value1", "value2")), Category("OTHER", ("value",)),
                 "a topic in your own words", "exact")
"""Placeholders for a graph with no categories or keywords (the names are not stored ones:
call ``categories``)."""

SERVER_INSTRUCTIONS = """\
Retrieval over a Neo4j graph of documents split into fragments (chapters, paragraphs,
summaries, questions, keywords). Use `categories` to learn the graph's category names, values
and ontologies, `query` to find documents or fragments with a boolean query (read its
description for the query language), `explain` to see how a query would run without running
it, `dataset_show` to read a stored result set (a dataset) with its members, weights and
lineage, `rerank_dataset` to reorder a dataset with the reranker into a new dataset, and
`goal_context` to get the fragments assembled for a goal. Answers are bounded in size: a cut
answer says what was left out and how to get it (`cut`, `next_offset`). Datasets and
reranking are writes: they are refused unless the server was started with --allow-writes."""

__all__ = ["NEUTRAL", "SERVER_INSTRUCTIONS", "Sample"]


SAMPLE_KEYWORDS = 20
"""Keyword texts read for the examples of the tool descriptions."""


def overview(graph: ThalabusGraph, ontology_id: str | None, max_names: int, max_values: int,
             keywords: int = 0, *, documentids: Sequence[str] | None = None) -> dict[str, Any]:
    """The graph's vocabulary row (``category_overview``), bounded as asked; ``documentids``:
    of those documents only (None: every document)."""
    rows = graph.db.read_plain("category_overview", ontologyid=ontology_id,
                               max_names=max_names, max_values=max_values,
                               max_keywords=keywords,
                               documentids=None if documentids is None else list(documentids))
    return rows[0]


def graph_sample(graph: ThalabusGraph) -> Sample:
    """The examples' material from ``graph``: its two most used category names with two
    values each, and short keyword texts."""
    row = overview(graph, None, 2, 2, SAMPLE_KEYWORDS)
    return Sample.of([(n["name"], [v["value"] for v in n["values"]]) for n in row["names"]],
                     row["keywords"])
