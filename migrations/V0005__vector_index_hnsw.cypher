// V0005: the vector indexes rebuilt with explicit HNSW build parameters.
// V0002 left `vector.hnsw.m` and `vector.hnsw.ef_construction` at Neo4j's defaults (16 / 100).
// At 200,000 perturbed real e5 chapters that graph leaves some true neighbours unreachable:
// recall@10 of the index against exact cosine stops at 0.97 however large k is asked
// (README "Vector-index candidates on real embeddings"). An index cannot change its options in
// place, so each one is dropped and created again with {{VECTOR_HNSW_M}} and
// {{VECTOR_HNSW_EF_CONSTRUCTION}} (settings vector_hnsw_m, vector_hnsw_ef_construction; the
// values used are recorded in the migration history, and a later run with other values is
// refused like a changed dimension). On a fresh database the indexes are empty and this is
// instant; on a populated one Neo4j rebuilds each index from the stored embeddings (the nodes
// are untouched) and migrate() waits until they are ONLINE.
// Released migrations are never edited: add a new V<n>__<what>.cypher instead.

DROP INDEX typical_rag IF EXISTS;

CREATE VECTOR INDEX typical_rag IF NOT EXISTS
FOR (c:Chapter) ON c.embedding
OPTIONS {indexConfig: {
  `vector.dimensions`: {{EMBEDDING_DIMENSIONS}},
  `vector.similarity_function`: '{{VECTOR_SIMILARITY}}',
  `vector.quantization.enabled`: {{VECTOR_QUANTIZATION}},
  `vector.hnsw.m`: {{VECTOR_HNSW_M}},
  `vector.hnsw.ef_construction`: {{VECTOR_HNSW_EF_CONSTRUCTION}}
}};

DROP INDEX paragraphs IF EXISTS;

CREATE VECTOR INDEX paragraphs IF NOT EXISTS
FOR (p:Paragraph) ON p.embedding
OPTIONS {indexConfig: {
  `vector.dimensions`: {{EMBEDDING_DIMENSIONS}},
  `vector.similarity_function`: '{{VECTOR_SIMILARITY}}',
  `vector.quantization.enabled`: {{VECTOR_QUANTIZATION}},
  `vector.hnsw.m`: {{VECTOR_HNSW_M}},
  `vector.hnsw.ef_construction`: {{VECTOR_HNSW_EF_CONSTRUCTION}}
}};

DROP INDEX summaries IF EXISTS;

CREATE VECTOR INDEX summaries IF NOT EXISTS
FOR (s:Summary) ON s.embedding
OPTIONS {indexConfig: {
  `vector.dimensions`: {{EMBEDDING_DIMENSIONS}},
  `vector.similarity_function`: '{{VECTOR_SIMILARITY}}',
  `vector.quantization.enabled`: {{VECTOR_QUANTIZATION}},
  `vector.hnsw.m`: {{VECTOR_HNSW_M}},
  `vector.hnsw.ef_construction`: {{VECTOR_HNSW_EF_CONSTRUCTION}}
}};
