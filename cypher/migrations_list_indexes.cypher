// Every index with its state and options (token lookup indexes included).
SHOW INDEXES YIELD name, type, entityType, labelsOrTypes, properties, state, owningConstraint, options
RETURN name, type, entityType, labelsOrTypes, properties, state, owningConstraint, options
ORDER BY name
