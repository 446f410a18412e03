// Update paragraphs that already exist, in place, after the chapters are written: a paragraph
// whose chapter changed loses its old IN_CHAPTER link and gets the new one (no orphans).
UNWIND $rows AS r
MATCH (p:Paragraph {fragmentid: r.fragmentid})
MATCH (c:Chapter {fragmentid: r.chapter})
SET p.ordinal = r.ordinal, p.text = r.text, p.embedding = r.embedding,
    p.embedding_hash = r.hash, p.ontologyid = r.ontologyid
WITH p, c
OPTIONAL MATCH (p)-[old:IN_CHAPTER]->(other)
WHERE other <> c
DELETE old
WITH DISTINCT p, c
MERGE (p)-[:IN_CHAPTER]->(c)
