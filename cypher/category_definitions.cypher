// The graph-defined categories, by name: those of $names, or every one when $names is null.
MATCH (d:CategoryDefinition)
WHERE $names IS NULL OR d.name IN $names
RETURN d.name AS name, d.pattern AS pattern
ORDER BY name
