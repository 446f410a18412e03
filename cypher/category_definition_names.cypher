// The names of the graph-defined categories (an ingest refuses a document storing one).
MATCH (d:CategoryDefinition)
RETURN d.name AS name
ORDER BY name
