// Forget the migration history and lock (schema objects stay). Used by clean().
MATCH (n)
WHERE n:__Neo4jMigration OR n:__Neo4jMigrationsLock
DETACH DELETE n
RETURN count(*) AS deleted
