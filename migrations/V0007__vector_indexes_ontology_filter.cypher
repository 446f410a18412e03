// requires: Neo4j 2026.01
// V0007: vector indexes that filter on the fragments' `ontologyid` inside the index (the
// Cypher 25 `SEARCH ... WHERE` clause, search_vector_in_index), one per embedded label, beside
// the plain ones of V0005 (a different schema: the label, the embedding and the filter
// property). Only the 2026.x line builds them, so this migration waits on 5.26 (see the
// `requires` rule in graph/migrations.py) and runs when the server is upgraded. The engine
// uses them only when all three exist and are ONLINE, and falls back to the plain index (or
// exact cosine) otherwise: nothing depends on this migration. The cost is a second HNSW graph
// per label (index memory and ingest time). Same options as V0005 (the recorded values are
// checked the same way). `CYPHER 25` because the 2026.x databases still default to Cypher 5,
// where `WITH [...]` in CREATE VECTOR INDEX is a syntax error.
// Released migrations are never edited: add a new V<n>__<what>.cypher instead.

CYPHER 25 CREATE VECTOR INDEX typical_rag_ontology IF NOT EXISTS
FOR (c:Chapter) ON c.embedding WITH [c.ontologyid]
OPTIONS {indexConfig: {
  `vector.dimensions`: {{EMBEDDING_DIMENSIONS}},
  `vector.similarity_function`: '{{VECTOR_SIMILARITY}}',
  `vector.quantization.enabled`: {{VECTOR_QUANTIZATION}},
  `vector.hnsw.m`: {{VECTOR_HNSW_M}},
  `vector.hnsw.ef_construction`: {{VECTOR_HNSW_EF_CONSTRUCTION}}
}};

CYPHER 25 CREATE VECTOR INDEX paragraphs_ontology IF NOT EXISTS
FOR (p:Paragraph) ON p.embedding WITH [p.ontologyid]
OPTIONS {indexConfig: {
  `vector.dimensions`: {{EMBEDDING_DIMENSIONS}},
  `vector.similarity_function`: '{{VECTOR_SIMILARITY}}',
  `vector.quantization.enabled`: {{VECTOR_QUANTIZATION}},
  `vector.hnsw.m`: {{VECTOR_HNSW_M}},
  `vector.hnsw.ef_construction`: {{VECTOR_HNSW_EF_CONSTRUCTION}}
}};

CYPHER 25 CREATE VECTOR INDEX summaries_ontology IF NOT EXISTS
FOR (s:Summary) ON s.embedding WITH [s.ontologyid]
OPTIONS {indexConfig: {
  `vector.dimensions`: {{EMBEDDING_DIMENSIONS}},
  `vector.similarity_function`: '{{VECTOR_SIMILARITY}}',
  `vector.quantization.enabled`: {{VECTOR_QUANTIZATION}},
  `vector.hnsw.m`: {{VECTOR_HNSW_M}},
  `vector.hnsw.ef_construction`: {{VECTOR_HNSW_EF_CONSTRUCTION}}
}};
