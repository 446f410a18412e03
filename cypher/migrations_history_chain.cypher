// The MIGRATED_TO links of the history chain, oldest first (for checks and tests).
MATCH (a:__Neo4jMigration)-[:MIGRATED_TO]->(b:__Neo4jMigration)
RETURN a.version AS from_version, b.version AS to_version
ORDER BY from_version, to_version
