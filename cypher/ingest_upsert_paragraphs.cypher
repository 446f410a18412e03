// Create or update paragraphs in place, after the chapters: a paragraph whose chapter changed
// loses its old IN_CHAPTER link and is linked to the new chapter, so no orphan remains.
UNWIND $rows AS r
MATCH (c:Chapter {fragmentid: r.chapter})
MERGE (p:Paragraph {fragmentid: r.fragmentid})
SET p:Fragment, p.documentid = r.documentid, p.ordinal = r.ordinal, p.text = r.text,
    p.embedding = r.embedding, p.embedding_hash = r.hash
WITH p, c
OPTIONAL MATCH (p)-[old:IN_CHAPTER]->(other)
WHERE other <> c
DELETE old
WITH DISTINCT p, c
MERGE (p)-[:IN_CHAPTER]->(c)
