"""Query evaluation: the reference evaluator (the oracle) and the compiled plan with pushdown."""

from thalabus_graph.plan.evaluator import BranchReranker, Evaluator

__all__ = ["BranchReranker", "Evaluator"]
