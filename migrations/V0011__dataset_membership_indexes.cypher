// V0011: the dataset membership schema. A dataset's members are its AGGREGATES relationships
// {weight, hidden, original_score, unscored} (docs/architecture.md, "Graph model"): readers
// page through them by weight and leave hidden ones out, and Cypher users filter on both, so
// both properties get a relationship property (range) index.
// Constraints: Community allows only uniqueness on relationship properties, which neither
// weight nor hidden has (many members share a weight; hidden is a boolean). Property type
// constraints (`REQUIRE a.weight IS :: FLOAT`, `REQUIRE a.hidden IS :: BOOLEAN`) and
// existence constraints are Enterprise-only, so the types are kept by the engine's own
// writes (cypher/dataset_add_*.cypher, dataset_hide.cypher), not by the schema.
// Released migrations are never edited: add a new V<n>__<what>.cypher instead.

CREATE INDEX aggregates_weight IF NOT EXISTS
FOR ()-[a:AGGREGATES]-() ON (a.weight);

CREATE INDEX aggregates_hidden IF NOT EXISTS
FOR ()-[a:AGGREGATES]-() ON (a.hidden);
