// A goal's own RAG fragments; weight = score (a fragment attached again takes the new one).
MERGE (g:Goal {goalid: $goalid})
WITH g
UNWIND $rows AS r
MATCH (f:Fragment {fragmentid: r.id})
MERGE (g)-[u:USES_FRAGMENT]->(f)
SET u.weight = r.weight
RETURN count(*) AS added
