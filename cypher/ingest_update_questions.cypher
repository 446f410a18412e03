// The embedding is stored as 32-bit floats (db.create.setNodeVectorProperty), half the bytes
// of a Cypher list of floats: an exact search over a filter's fragments reads them, and the
// vector index holds 32-bit floats either way.
// Update questions that already exist, in place: the node keeps its identity (and so its
// dataset memberships); ordinal, text, embedding and hash are replaced.
UNWIND $rows AS r
MATCH (q:Question {fragmentid: r.fragmentid})
SET q.ordinal = r.ordinal, q.text = r.text,
    q.embedding_hash = r.hash, q.ontologyid = r.ontologyid
REMOVE q.embedding
WITH q, r WHERE r.embedding IS NOT NULL
CALL db.create.setNodeVectorProperty(q, 'embedding', r.embedding)
