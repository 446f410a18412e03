// Baseline writer for the ingestion benchmark: one chapter, one transaction.
MERGE (d:Document {documentid: $documentid})
CREATE (c:Fragment:Chapter {fragmentid: $fragmentid, documentid: $documentid, ordinal: 1,
                            text: $text, embedding: $embedding})
CREATE (c)-[:IN_DOCUMENT]->(d)
