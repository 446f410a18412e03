// Attach a dataset to a goal (the goal is created when new). With $replaces (a dataset id or
// null), a dataset the goal uses that this one was derived from gives up its place: the new
// one takes its ordinal, so the goal reads the derived weights instead of both.
MERGE (g:Goal {goalid: $goalid})
WITH g
MATCH (ds:Dataset {datasetid: $datasetid})
OPTIONAL MATCH (g)-[old:USES_DATASET]->(:Dataset {datasetid: $replaces})
OPTIONAL MATCH (g)-[existing:USES_DATASET]->(:Dataset)
WITH g, ds, old, old IS NOT NULL AS replaced,
     coalesce(old.ordinal, coalesce(max(existing.ordinal), 0) + 1) AS ordinal
MERGE (g)-[u:USES_DATASET]->(ds)
ON CREATE SET u.ordinal = ordinal
DELETE old
RETURN u.ordinal AS ordinal, replaced
