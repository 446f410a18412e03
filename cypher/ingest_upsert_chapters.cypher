// Create or update chapters in place: an existing node keeps its identity (and so its dataset
// memberships); ordinal, text, embedding and hash are replaced.
UNWIND $rows AS r
MATCH (d:Document {documentid: r.documentid})
MERGE (c:Chapter {fragmentid: r.fragmentid})
SET c:Fragment, c.documentid = r.documentid, c.ordinal = r.ordinal, c.text = r.text,
    c.embedding = r.embedding, c.embedding_hash = r.hash
MERGE (c)-[:IN_DOCUMENT]->(d)
