"""The checksum of a migration: CRC32 over its normalised statements.

Normalising (line endings unified, trailing spaces, indentation and blank lines dropped; the
splitter already removed comments) makes the checksum change when the file's Cypher changes
and not when only its layout or a comment does.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

from thalabus_graph.graph.migrations.parsing import Statement


def normalise_statement(text: str) -> str:
    """Unify line endings, strip trailing spaces, leading indentation and blank lines."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(ln.rstrip() for ln in lines if ln.strip()).lstrip()


def checksum(statements: Sequence[Statement]) -> str:
    """CRC32 (unsigned, decimal text) over the normalised statements joined by ``;\\n``."""
    joined = ";\n".join(normalise_statement(s.text) for s in statements)
    return str(zlib.crc32(joined.encode("utf-8")) & 0xFFFFFFFF)
