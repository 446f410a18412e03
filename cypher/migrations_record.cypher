// Append one applied migration to the history chain:
// (previous)-[:MIGRATED_TO {at, in, by}]->(:__Neo4jMigration {version, ...}).
// Params: $version, $description, $checksum, $placeholders (JSON text), $installed_by,
// $execution_time_ms.
OPTIONAL MATCH (prev:__Neo4jMigration)
WITH prev ORDER BY prev.version DESC LIMIT 1
CREATE (m:__Neo4jMigration {
  version: $version,
  description: $description,
  checksum: $checksum,
  placeholders: $placeholders,
  installed_on: datetime(),
  installed_by: $installed_by,
  execution_time_ms: $execution_time_ms
})
FOREACH (p IN CASE WHEN prev IS NULL THEN [] ELSE [prev] END |
  CREATE (p)-[:MIGRATED_TO {
    at: m.installed_on,
    in: duration({milliseconds: $execution_time_ms}),
    by: $installed_by
  }]->(m))
RETURN m.version AS version
