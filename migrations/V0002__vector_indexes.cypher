// V0002: vector indexes on chapter, paragraph and summary embeddings.
// {{EMBEDDING_DIMENSIONS}}, {{VECTOR_SIMILARITY}} and {{VECTOR_QUANTIZATION}} are filled from
// validated settings (embedding_dimensions, vector_similarity, vector_quantization) when the
// migration runs; the values used are
// recorded in the migration history, and a later run with other values is refused.

CREATE VECTOR INDEX typical_rag IF NOT EXISTS
FOR (c:Chapter) ON c.embedding
OPTIONS {indexConfig: {
  `vector.dimensions`: {{EMBEDDING_DIMENSIONS}},
  `vector.similarity_function`: '{{VECTOR_SIMILARITY}}',
  `vector.quantization.enabled`: {{VECTOR_QUANTIZATION}}
}};

CREATE VECTOR INDEX paragraphs IF NOT EXISTS
FOR (p:Paragraph) ON p.embedding
OPTIONS {indexConfig: {
  `vector.dimensions`: {{EMBEDDING_DIMENSIONS}},
  `vector.similarity_function`: '{{VECTOR_SIMILARITY}}',
  `vector.quantization.enabled`: {{VECTOR_QUANTIZATION}}
}};

CREATE VECTOR INDEX summaries IF NOT EXISTS
FOR (s:Summary) ON s.embedding
OPTIONS {indexConfig: {
  `vector.dimensions`: {{EMBEDDING_DIMENSIONS}},
  `vector.similarity_function`: '{{VECTOR_SIMILARITY}}',
  `vector.quantization.enabled`: {{VECTOR_QUANTIZATION}}
}};
