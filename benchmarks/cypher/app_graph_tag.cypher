// The application's own nodes beside the scale graph: one (:Tag {name: $value}) TAGS exactly
// the documents having stored category $category = $value (idempotent: a rerun adds nothing).
MERGE (t:Tag {name: $value})
WITH t
MATCH (:Category {name: $category, value: $value})<-[:HAS_CATEGORY]-(d:Document)
MERGE (t)-[:TAGS]->(d)
RETURN count(DISTINCT d) AS tagged
