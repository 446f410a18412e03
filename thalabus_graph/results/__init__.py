"""Results in one place: what a query returns (``query_result``), fragments aggregated to
documents with their details (``documents``) and the executed plan as a printable tree
(``plan_view``). The rules that pick and combine fragments stay in ``fragments``."""
