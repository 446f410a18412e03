"""`Budget`: a bound on model calls (and tokens) shared by concurrent reranking calls.

A call is reserved before the reranker runs and its usage recorded after, under one lock, so
callers sharing a budget never overspend it, whether they run in threads or on an event loop.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from thalabus_graph.errors import ConfigurationError


@runtime_checkable
class BudgetPolicy(Protocol):
    """What the reranking stage needs from a budget."""

    def try_acquire(self) -> bool:
        """Reserve one model call; False (and nothing reserved) when the budget is spent."""
        ...

    def record(self, usage: Mapping[str, int]) -> None:
        """Record the usage of a call reserved with `try_acquire`."""
        ...


class Budget:
    """At most ``max_calls`` model calls and ``max_tokens`` tokens (None = unbounded).

    Thread-safe and usable from async code (its lock is never held across an ``await``).

    Example:
        >>> budget = Budget(max_calls=1)
        >>> budget.try_acquire(), budget.try_acquire()
        (True, False)
        >>> budget.record({"total_tokens": 120}); budget.calls, budget.tokens
        (1, 120)
    """

    def __init__(self, *, max_calls: int | None = None, max_tokens: int | None = None) -> None:
        if max_calls is not None and max_calls < 0:
            raise ConfigurationError("max_calls must not be negative")
        if max_tokens is not None and max_tokens < 0:
            raise ConfigurationError("max_tokens must not be negative")
        self.max_calls = max_calls
        self.max_tokens = max_tokens
        self._lock = threading.Lock()
        self._calls = 0
        self._tokens = 0
        self._usage: dict[str, int] = {}

    @property
    def calls(self) -> int:
        """Model calls reserved so far."""
        with self._lock:
            return self._calls

    @property
    def tokens(self) -> int:
        """Tokens recorded so far (``total_tokens`` of each usage)."""
        with self._lock:
            return self._tokens

    @property
    def usage(self) -> dict[str, int]:
        """Every usage counter recorded so far, summed."""
        with self._lock:
            return dict(self._usage)

    @property
    def exhausted(self) -> bool:
        """True when no further call may be reserved."""
        with self._lock:
            return self._exhausted()

    def _exhausted(self) -> bool:
        if self.max_calls is not None and self._calls >= self.max_calls:
            return True
        return self.max_tokens is not None and self._tokens >= self.max_tokens

    def try_acquire(self) -> bool:
        """Reserve one model call; False (and nothing reserved) when the budget is spent."""
        with self._lock:
            if self._exhausted():
                return False
            self._calls += 1
            return True

    def record(self, usage: Mapping[str, int]) -> None:
        """Add the usage of one reserved call (``total_tokens`` counts against max_tokens)."""
        with self._lock:
            for key, value in usage.items():
                self._usage[key] = self._usage.get(key, 0) + int(value)
            self._tokens += int(usage.get("total_tokens", 0))
