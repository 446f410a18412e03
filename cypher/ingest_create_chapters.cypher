UNWIND $rows AS r
MATCH (d:Document {documentid: r.documentid})
CREATE (c:Fragment:Chapter {fragmentid: r.fragmentid, documentid: r.documentid,
                            ordinal: r.ordinal, text: r.text,
                            embedding: r.embedding, embedding_hash: r.hash,
                            ontologyid: r.ontologyid})
CREATE (c)-[:IN_DOCUMENT]->(d)
SET c:$(r.labels)
