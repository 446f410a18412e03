// The embedding is stored as 32-bit floats (db.create.setNodeVectorProperty), half the bytes
// of a Cypher list of floats: an exact search over a filter's fragments reads them, and the
// vector index holds 32-bit floats either way.
// Update chapters that already exist, in place: the node keeps its identity (and so its dataset
// memberships); ordinal, text, embedding and hash are replaced, and its language label
// (r.labels, one or none) replaces any of $language_labels (every language's).
UNWIND $rows AS r
MATCH (c:Chapter {fragmentid: r.fragmentid})
SET c.ordinal = r.ordinal, c.text = r.text,
    c.embedding_hash = r.hash, c.ontologyid = r.ontologyid
REMOVE c:$($language_labels)
SET c:$(r.labels)
REMOVE c.embedding
WITH c, r WHERE r.embedding IS NOT NULL
CALL db.create.setNodeVectorProperty(c, 'embedding', r.embedding)
