// Dataset members a re-ingest is about to drop: AGGREGATES edges to fragments of these
// documents whose fragment id is no longer in the document (doc.keep), per dataset.
UNWIND $docs AS doc
MATCH (f:Fragment {documentid: doc.documentid})
WHERE NOT f.fragmentid IN doc.keep
MATCH (ds:Dataset)-[:AGGREGATES]->(f)
RETURN ds.datasetid AS datasetid, count(*) AS members
ORDER BY datasetid
