// The embedding is stored as 32-bit floats (db.create.setNodeVectorProperty), half the bytes
// of a Cypher list of floats: an exact search over a filter's fragments reads them, and the
// vector index holds 32-bit floats either way.
UNWIND $rows AS r
MATCH (d:Document {documentid: r.documentid})
CREATE (q:Fragment:Question {fragmentid: r.fragmentid, documentid: r.documentid,
                             ordinal: r.ordinal, text: r.text,
                             embedding_hash: r.hash,
                             ontologyid: r.ontologyid})
CREATE (q)-[:IN_DOCUMENT]->(d)
WITH q, r WHERE r.embedding IS NOT NULL
CALL db.create.setNodeVectorProperty(q, 'embedding', r.embedding)
