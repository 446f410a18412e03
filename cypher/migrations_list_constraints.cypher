// Names of every constraint, for clean().
SHOW CONSTRAINTS YIELD name
RETURN name
ORDER BY name
