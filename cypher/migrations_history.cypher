// Every applied migration, oldest first. Properties come as one map, so a fresh database
// (no such property keys yet) raises no "property key does not exist" notifications.
MATCH (m:__Neo4jMigration)
RETURN properties(m) AS migration
ORDER BY m.version
