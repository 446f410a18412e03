// Create or update keywords in place (no embedding: keywords are searched as text only).
UNWIND $rows AS r
MATCH (d:Document {documentid: r.documentid})
MERGE (k:Keyword {fragmentid: r.fragmentid})
SET k:Fragment, k.documentid = r.documentid, k.ordinal = r.ordinal, k.text = r.text
MERGE (k)-[:IN_DOCUMENT]->(d)
