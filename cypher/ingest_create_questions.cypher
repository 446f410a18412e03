UNWIND $rows AS r
MATCH (d:Document {documentid: r.documentid})
CREATE (q:Fragment:Question {fragmentid: r.fragmentid, documentid: r.documentid,
                             ordinal: r.ordinal, text: r.text,
                             embedding: r.embedding, embedding_hash: r.hash,
                             ontologyid: r.ontologyid})
CREATE (q)-[:IN_DOCUMENT]->(d)
