// Release the migration lock held by this runner. Params: $lock, $owner.
MATCH (l:__Neo4jMigrationsLock {name: $lock, owner: $owner})
DELETE l
RETURN count(*) AS released
