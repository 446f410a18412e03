// A goal's own RAG fragments that are category stubs point at their Document.
MERGE (g:Goal {goalid: $goalid})
WITH g
UNWIND $rows AS r
MATCH (d:Document {documentid: r.id})
MERGE (g)-[u:USES_FRAGMENT]->(d)
SET u.weight = r.weight
RETURN count(*) AS added
