// Drop one index by name (Neo4j 5.16+ takes the name as a parameter). Params: $name.
DROP INDEX $name IF EXISTS
