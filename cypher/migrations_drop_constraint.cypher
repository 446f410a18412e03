// Drop one constraint by name (Neo4j 5.16+ takes the name as a parameter). Params: $name.
DROP CONSTRAINT $name IF EXISTS
