// Store (or replace) the graph-defined category $name with its checked $pattern.
MERGE (d:CategoryDefinition {name: $name})
SET d.pattern = $pattern, d.defined_at = datetime()
RETURN d.name AS name
