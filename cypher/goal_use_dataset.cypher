MERGE (g:Goal {goalid: $goalid})
WITH g
MATCH (ds:Dataset {datasetid: $datasetid})
OPTIONAL MATCH (g)-[existing:USES_DATASET]->(:Dataset)
WITH g, ds, coalesce(max(existing.ordinal), 0) + 1 AS ordinal
MERGE (g)-[u:USES_DATASET]->(ds)
ON CREATE SET u.ordinal = ordinal
RETURN u.ordinal AS ordinal
