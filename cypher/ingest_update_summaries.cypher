// The embedding is stored as 32-bit floats (db.create.setNodeVectorProperty), half the bytes
// of a Cypher list of floats: an exact search over a filter's fragments reads them, and the
// vector index holds 32-bit floats either way.
// Update summaries that already exist, in place: the node keeps its identity (and so its dataset
// memberships); ordinal, text, embedding and hash are replaced.
UNWIND $rows AS r
MATCH (s:Summary {fragmentid: r.fragmentid})
SET s.ordinal = r.ordinal, s.text = r.text,
    s.embedding_hash = r.hash, s.ontologyid = r.ontologyid
REMOVE s.embedding
WITH s, r WHERE r.embedding IS NOT NULL
CALL db.create.setNodeVectorProperty(s, 'embedding', r.embedding)
