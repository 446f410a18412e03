"""What a one-statement read runs its statement on: the open transaction of a query's
``Database.one_read``, or an auto-commit read of its own (``AutoCommit``), which needs no
BEGIN and COMMIT around it (``Database.read_alone``)."""

from __future__ import annotations

from typing import Any, Protocol

import neo4j
from neo4j import Session

AUTO_COMMIT_ATTEMPTS = 3
"""Tries of a read run in an auto-commit transaction when the driver calls its failure
retryable (a managed transaction is retried by the driver itself)."""


class Runs(Protocol):
    """What a one-statement ``work`` runs its statement on: the open transaction of
    ``one_read`` or an auto-commit read (``AutoCommit``)."""

    def run(self, query: str, parameters: dict[str, Any] | None = None, /) -> neo4j.Result:
        """Run one statement; its result."""
        ...


class AutoCommit:
    """A session seen as a transaction by a one-statement ``work``: its statement is an
    auto-commit transaction bounded by the budget left (``timeout``, None: the server's)."""

    def __init__(self, session: Session, timeout: float | None) -> None:
        self.session = session
        self.timeout = timeout

    def run(self, query: str, parameters: dict[str, Any] | None = None, /) -> neo4j.Result:
        """Run one statement as an auto-commit transaction of its own."""
        return self.session.run(neo4j.Query(query, timeout=self.timeout), parameters)
