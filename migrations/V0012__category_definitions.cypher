// V0012: graph-defined categories. An application defines a category name by a Cypher pattern
// over its own graph (graph/category_definitions.py); the definition is a
// (:CategoryDefinition {name, pattern}) node, one per name, read by every query that uses
// the name (by name: the constraint's index serves the read).
// Released migrations are never edited: add a new V<n>__<what>.cypher instead.

CREATE CONSTRAINT category_definition_name IF NOT EXISTS
FOR (d:CategoryDefinition) REQUIRE d.name IS UNIQUE;
