// Dataset members a re-ingest is about to drop: AGGREGATES edges to the fragments that are no
// longer in their document, counted per dataset.
UNWIND $fragmentids AS fragmentid
MATCH (f:Fragment {fragmentid: fragmentid})
MATCH (ds:Dataset)-[:AGGREGATES]->(f)
RETURN ds.datasetid AS datasetid, count(*) AS members
ORDER BY datasetid
