// Migration runner bootstrap: at most one lock node per name (makes the MERGE in
// migrations_acquire_lock safe between concurrent runners). Idempotent.
CREATE CONSTRAINT thalabus_migrations_lock_name IF NOT EXISTS
FOR (l:__Neo4jMigrationsLock) REQUIRE l.name IS UNIQUE
