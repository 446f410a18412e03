"""Neo4j access: driver wrapper, Cypher library, migrations, models and the local launcher."""
