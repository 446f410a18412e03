// The server's release (e.g. '5.26.31', '2026.09.0'): migrations that need a newer line wait.
CALL dbms.components() YIELD name, versions
WHERE name = 'Neo4j Kernel'
RETURN versions[0] AS version
