// Migration runner bootstrap: each version is recorded at most once in the history. Idempotent.
CREATE CONSTRAINT thalabus_migrations_version IF NOT EXISTS
FOR (m:__Neo4jMigration) REQUIRE m.version IS UNIQUE
