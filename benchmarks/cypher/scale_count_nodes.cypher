// Every node of the database: an empty database may be claimed by the scale benchmark.
MATCH (n) RETURN count(n) AS nodes
