// The current holder of the migration lock, if any. Params: $lock.
MATCH (l:__Neo4jMigrationsLock {name: $lock})
RETURN l.owner AS owner, l.acquired_at AS acquired_at
