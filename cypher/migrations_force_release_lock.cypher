// Remove the migration lock whoever holds it (a runner that died). Params: $lock.
MATCH (l:__Neo4jMigrationsLock {name: $lock})
DELETE l
RETURN count(*) AS released
