// V0008: the questions source: the uniqueness constraint of `Question.fragmentid` (as V0001 has
// one per fragment label, so re-ingest's MATCH on (:Question {fragmentid}) uses an index) and
// the vector index `questions` on `Question.embedding`, with the HNSW build parameters of
// V0005 (the values used are recorded and checked like theirs). A graph migrated before this
// version holds no Question nodes, and a search skips a source without nodes, so its queries
// do not need this index; ingest questions only after migrating. The 2026.x ontology-filtered
// twin is V0010 (it waits for that line, as V0007 does).
// Released migrations are never edited: add a new V<n>__<what>.cypher instead.

CREATE CONSTRAINT question_fragmentid IF NOT EXISTS
FOR (q:Question) REQUIRE q.fragmentid IS UNIQUE;

CREATE VECTOR INDEX questions IF NOT EXISTS
FOR (q:Question) ON q.embedding
OPTIONS {indexConfig: {
  `vector.dimensions`: {{EMBEDDING_DIMENSIONS}},
  `vector.similarity_function`: '{{VECTOR_SIMILARITY}}',
  `vector.quantization.enabled`: {{VECTOR_QUANTIZATION}},
  `vector.hnsw.m`: {{VECTOR_HNSW_M}},
  `vector.hnsw.ef_construction`: {{VECTOR_HNSW_EF_CONSTRUCTION}}
}};
