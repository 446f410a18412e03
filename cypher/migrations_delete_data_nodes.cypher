// Delete every data node, keeping the schema and the migration history and lock (tests).
MATCH (n)
WHERE NOT n:__Neo4jMigration AND NOT n:__Neo4jMigrationsLock
DETACH DELETE n
RETURN count(*) AS deleted
