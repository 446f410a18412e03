// The embedding is stored as 32-bit floats (db.create.setNodeVectorProperty), half the bytes
// of a Cypher list of floats: an exact search over a filter's fragments reads them, and the
// vector index holds 32-bit floats either way.
// Update paragraphs that already exist, in place, after the chapters are written: a paragraph
// whose chapter changed loses its old IN_CHAPTER link and gets the new one (no orphans).
UNWIND $rows AS r
MATCH (p:Paragraph {fragmentid: r.fragmentid})
MATCH (c:Chapter {fragmentid: r.chapter})
SET p.ordinal = r.ordinal, p.text = r.text,
    p.embedding_hash = r.hash, p.ontologyid = r.ontologyid
WITH p, c, r
OPTIONAL MATCH (p)-[old:IN_CHAPTER]->(other)
WHERE other <> c
DELETE old
WITH DISTINCT p, c, r
MERGE (p)-[:IN_CHAPTER]->(c)
REMOVE p.embedding
WITH p, r WHERE r.embedding IS NOT NULL
CALL db.create.setNodeVectorProperty(p, 'embedding', r.embedding)
