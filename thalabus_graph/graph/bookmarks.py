"""Bookmarks handed in from another process, checked before they reach the driver.

A bookmark is an opaque string the server issued (``FB:`` and base64). The driver sends any
string on, and the server then answers a malformed one with an internal error ("Range [3, 1)
out of bounds") and accepts one of the ``system`` database, which names no state of the
graph's data. ``checked`` refuses both with a message that says what a bookmark is and where
it comes from, and takes a lone string as one bookmark (not as its characters).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable

from thalabus_graph.errors import ConfigurationError

_SHAPE = re.compile(r"^[A-Z]{1,8}:[A-Za-z0-9+/_-]+=*$")
SYSTEM_DATABASE_ID = bytes(15) + b"\x01"
"""The id the ``system`` database has on every server (00000000-...-000000000001)."""
_ID_MARKER = b"\xcc\x10"
"""Packstream bytes(16): the database id that opens a decoded bookmark."""
MAX_BOOKMARKS = 1000
"""How many bookmarks one call takes: a causal chain needs one per database and server."""
MAX_BOOKMARK_CHARS = 4096
"""The length of one bookmark; the server issues a few dozen characters."""


def checked(bookmarks: Iterable[str] | str) -> list[str]:
    """The bookmarks to wait for, empty ones dropped; a ``str`` is one bookmark.

    Raises:
        ConfigurationError: a value that is not a bookmark string the server issued, or a
            bookmark of the ``system`` database (it orders no data: pass the bookmarks of a
            result of this graph, e.g. ``QueryResult.bookmarks``).
    """
    values = [bookmarks] if isinstance(bookmarks, str) else list(bookmarks)
    if len(values) > MAX_BOOKMARKS:
        raise ConfigurationError(f"{len(values)} bookmarks given; at most {MAX_BOOKMARKS}")
    out: list[str] = []
    for value in values:
        if not isinstance(value, str):
            raise ConfigurationError(
                f"a bookmark is a string a result carried (QueryResult.bookmarks), not "
                f"{type(value).__name__}")
        if not value:
            continue
        if len(value) > MAX_BOOKMARK_CHARS or not _SHAPE.fullmatch(value):
            raise ConfigurationError(
                f"{_short(value)} is not a bookmark: pass the strings of a result's "
                "bookmarks (QueryResult.bookmarks, RerankResult.bookmarks, "
                "IngestReport.bookmarks) as they are")
        if _database_id(value) == SYSTEM_DATABASE_ID:
            raise ConfigurationError(
                f"bookmark {_short(value)} is one of the system database, which orders no "
                "data of the graph: pass the bookmarks of a result of this graph")
        out.append(value)
    return out


def _database_id(bookmark: str) -> bytes | None:
    """The database id a bookmark opens with, when it has the form Neo4j 5 and later issue;
    None for any other form (the server judges it)."""
    payload = bookmark.split(":", 1)[1].replace("-", "+").replace("_", "/")
    try:
        raw = base64.b64decode(payload + "=" * (-len(payload) % 4))
    except (binascii.Error, ValueError):
        return None
    if len(raw) >= 19 and raw[1:3] == _ID_MARKER:
        return raw[3:19]
    return None


def _short(value: str) -> str:
    return repr(value if len(value) <= 40 else value[:39] + "…")
