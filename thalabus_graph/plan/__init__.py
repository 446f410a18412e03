"""The query plan: its values and cost model (``steps``, ``cost``), the compiler that makes
it, the evaluator that runs it and explain that renders it (docs/architecture.md, "The
compiled plan")."""
