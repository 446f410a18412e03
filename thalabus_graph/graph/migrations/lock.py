"""The migration lock: one runner at a time holds the ``:__Neo4jMigrationsLock`` node."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class LockInfo:
    """Who holds the migration lock and since when."""

    owner: str
    acquired_at: datetime | None
