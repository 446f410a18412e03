"""The names of the properties the engine itself writes or reads on ``Document`` and fragment
nodes; every other property on them is the input's or the application's."""

from __future__ import annotations

INGEST_PROPERTIES = "ingest_properties"
"""The Document property listing the names of the properties the last ingest gave it: the
next ingest removes those its line no longer gives and leaves every other property (the
application's) alone (``cypher/ingest_upsert_documents.cypher``)."""

ENGINE_PROPERTIES = frozenset({
    "fragmentid", "text", "embedding", "embedding_hash", "ordinal", "ontologyid",
    "ingest_lock", INGEST_PROPERTIES,
})
"""Node properties the engine writes or reads on Document and fragment nodes besides the
input's own keys (``cypher/ingest_*.cypher``, the searches, dataset members): an input
document may not use them as extra properties."""

__all__ = ["ENGINE_PROPERTIES", "INGEST_PROPERTIES"]
