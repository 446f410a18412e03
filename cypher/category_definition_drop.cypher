// Remove the graph-defined category $name; dropped says whether it existed.
OPTIONAL MATCH (d:CategoryDefinition {name: $name})
WITH d, d IS NOT NULL AS dropped
DETACH DELETE d
RETURN dropped
