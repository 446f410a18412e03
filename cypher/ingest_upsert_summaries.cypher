// Create or update summaries in place: an existing node keeps its identity (and so its dataset
// memberships); ordinal, text, embedding and hash are replaced.
UNWIND $rows AS r
MATCH (d:Document {documentid: r.documentid})
MERGE (s:Summary {fragmentid: r.fragmentid})
SET s:Fragment, s.documentid = r.documentid, s.ordinal = r.ordinal, s.text = r.text,
    s.embedding = r.embedding, s.embedding_hash = r.hash
MERGE (s)-[:IN_DOCUMENT]->(d)
