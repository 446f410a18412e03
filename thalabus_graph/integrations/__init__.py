"""Adapters that plug thalabus-graph into retrieval frameworks people already use.

Import the submodule of your framework; each needs its optional extra::

    from thalabus_graph.integrations.langchain import ThalabusLangChainRetriever    # [langchain]
    from thalabus_graph.integrations.llamaindex import ThalabusLlamaIndexRetriever  # [llamaindex]

Both wrap the same core (`thalabus_graph.integrations.core.Source`): the user's question as one
semantic phrase (or, with ``query_syntax=True``, a Thalabus query) within a scope, at most ``k``
fragments with distinct texts per document, optionally through the reranking stage.
"""
