// Delete every data node, keeping the schema, the migration history and lock, and the test
// suite's marker (tests; the marker says the suite may touch this database again).
MATCH (n)
WHERE NOT n:__Neo4jMigration AND NOT n:__Neo4jMigrationsLock AND NOT n:__ThalabusTestMarker
DETACH DELETE n
RETURN count(*) AS deleted
