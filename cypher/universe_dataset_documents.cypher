// Documents with a visible member in at least one of the datasets.
MATCH (ds:Dataset)-[a:AGGREGATES]->(m)
WHERE ds.datasetid IN $datasetids AND NOT coalesce(a.hidden, false)
RETURN collect(DISTINCT m.documentid) AS documentids
