// Take the migration lock if nobody holds it; returns the holder (ours when owner = $owner).
// Params: $lock (lock name), $owner (unique id of this runner).
MERGE (l:__Neo4jMigrationsLock {name: $lock})
  ON CREATE SET l.owner = $owner, l.acquired_at = datetime()
RETURN l.owner AS owner, l.acquired_at AS acquired_at
