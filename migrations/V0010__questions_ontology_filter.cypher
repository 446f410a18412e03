// requires: Neo4j 2026.01
// V0010: the ontology-filtered twin of the `questions` vector index (V0008), built the way
// V0007 builds the other three: on the embedding and `ontologyid` (the Cypher 25
// `SEARCH ... WHERE` clause of search_vector_in_index), same options, only on the 2026.x line
// (this migration waits on 5.26 and runs when the server is upgraded). The engine takes the
// in-index path only when all four filtered indexes are ONLINE, so a 2026.x graph without
// this one searches on the plain paths. `CYPHER 25` because the 2026.x databases still
// default to Cypher 5, where `WITH [...]` in CREATE VECTOR INDEX is a syntax error.
// Released migrations are never edited: add a new V<n>__<what>.cypher instead.

CYPHER 25 CREATE VECTOR INDEX questions_ontology IF NOT EXISTS
FOR (q:Question) ON q.embedding WITH [q.ontologyid]
OPTIONS {indexConfig: {
  `vector.dimensions`: {{EMBEDDING_DIMENSIONS}},
  `vector.similarity_function`: '{{VECTOR_SIMILARITY}}',
  `vector.quantization.enabled`: {{VECTOR_QUANTIZATION}},
  `vector.hnsw.m`: {{VECTOR_HNSW_M}},
  `vector.hnsw.ef_construction`: {{VECTOR_HNSW_EF_CONSTRUCTION}}
}};
