"""Adapters that plug thalabus-graph into retrieval frameworks people already use.

Import the submodule of your framework; each needs its optional extra::

    from thalabus_graph.integrations.langchain import ThalabusRetriever   # [langchain]
    from thalabus_graph.integrations.llamaindex import ThalabusRetriever  # [llamaindex]

Both wrap the same core (`thalabus_graph.integrations.core.Source`): a Thalabus query within a
scope, at most ``k`` fragments, optionally through the reranking stage.
"""
