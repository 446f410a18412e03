// Re-ingest replaces a document whole: drop every fragment it had (and their relationships).
UNWIND $documentids AS documentid
MATCH (f:Fragment {documentid: documentid})
DETACH DELETE f
