"""The query language and the tools, described for an LLM that has to write queries.

The text goes into the ``query`` and ``explain`` tool descriptions, so a model reads the rules
and examples before its first call; every example here parses (a unit test checks it).
"""

from __future__ import annotations

QUERY_RULES = """\
Thalabus query language (boolean retrieval over meaning, text and categories):
- "double quotes" search by MEANING (semantic vector search): "asylum seeker from Iraq".
- 'single quotes' search the TEXT (full-text, case-insensitive): 'Bagdad'.
  @'...' is case-sensitive text: @'BAMF'.
- NAME=VALUE filters by a document category; several values mean any of them:
  COUNTRY_OF_ORIGIN=IQ,SY. Quote a value with spaces: DECISION='granted asylum'.
- Combine with AND, OR, NOT (any letter case) and parentheses. NOT binds tighter than AND,
  AND tighter than OR. Two terms side by side need an operator between them.
- A bare word is an ERROR: write "cat" (meaning) or 'cat' (text), never cat.
- Inside quotes, escape the same quote with a backslash: 'Jane\\'s'.
- Category names and values must exist in the graph; an unknown one is reported with a
  "did you mean" suggestion.
Examples:
  "conversion to Christianity" AND COUNTRY_OF_ORIGIN=IQ
  ("kitchen floor" OR 'cleanup') AND NOT DECISION=rejected
  'Verwaltungsgericht' AND YEAR=2020,2021
  COUNTRY_OF_ORIGIN=IQ AND NOT DECISION='granted asylum'"""

EXAMPLES = (
    '"conversion to Christianity" AND COUNTRY_OF_ORIGIN=IQ',
    "(\"kitchen floor\" OR 'cleanup') AND NOT DECISION=rejected",
    "'Verwaltungsgericht' AND YEAR=2020,2021",
    "COUNTRY_OF_ORIGIN=IQ AND NOT DECISION='granted asylum'",
    "@'BAMF'",
    "'Jane\\'s'",
)
"""The examples of ``QUERY_RULES`` as Python strings (the test parses each)."""

SERVER_INSTRUCTIONS = """\
Retrieval over a Neo4j graph of documents split into fragments (chapters, paragraphs,
summaries, questions, keywords). Use `query` to find documents or fragments with a boolean
query (read its description for the query language), `explain` to see how a query would run
without running it, `dataset_show` to read a stored result set (a dataset) with its members,
weights and lineage, `rerank_dataset` to reorder a dataset with the reranker into a new dataset, and
`goal_context` to get the fragments assembled for a goal. Datasets and reranking are writes:
they are refused unless the server was started with --allow-writes."""

__all__ = ["EXAMPLES", "QUERY_RULES", "SERVER_INSTRUCTIONS"]
