MATCH (:Goal {goalid: $goalid})-[u:USES_DATASET]->(ds:Dataset)
RETURN ds.datasetid AS datasetid, u.ordinal AS ordinal
ORDER BY u.ordinal, ds.datasetid
