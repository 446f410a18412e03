UNWIND $rows AS r
MATCH (c:Chapter {fragmentid: r.chapter})
CREATE (p:Fragment:Paragraph {fragmentid: r.fragmentid, documentid: r.documentid,
                              ordinal: r.ordinal, text: r.text,
                              embedding: r.embedding, embedding_hash: r.hash,
                              ontologyid: r.ontologyid})
CREATE (p)-[:IN_CHAPTER]->(c)
