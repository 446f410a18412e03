// Load a whole document into a goal (the goal is created when new); no row when the document
// does not exist, and then no goal is created either.
MATCH (d:Document {documentid: $documentid})
MERGE (g:Goal {goalid: $goalid})
WITH g, d
OPTIONAL MATCH (g)-[existing:LOADS_DOCUMENT]->(:Document)
WITH g, d, coalesce(max(existing.ordinal), 0) + 1 AS ordinal
MERGE (g)-[u:LOADS_DOCUMENT]->(d)
ON CREATE SET u.ordinal = ordinal
RETURN u.ordinal AS ordinal
