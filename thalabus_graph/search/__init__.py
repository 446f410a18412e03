"""The searches over the graph and the one runner of their statements (``runner``); the
executor (``executor.SearchExecutor``) ties them together for one evaluation."""
