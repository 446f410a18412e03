UNWIND $rows AS r
MATCH (d:Document {documentid: r.documentid})
CREATE (k:Fragment:Keyword {fragmentid: r.fragmentid, documentid: r.documentid,
                            ordinal: r.ordinal, text: r.text})
CREATE (k)-[:IN_DOCUMENT]->(d)
SET k:$(r.labels)
