// Approximate nearest fragments from one vector index, rescored with exact cosine on the index
// scale (1 + cos) / 2: a quantized index's own scores drift by ~1e-4, and exact scores keep
// the index path and the exact path (search_vector_exact) identical for the same pair.
// $documentids (or null) keeps only fragments of those documents, after the index lookup.
CALL db.index.vector.queryNodes($index, $k, $vector) YIELD node
WITH node
WHERE $documentids IS NULL OR node.documentid IN $documentids
RETURN node.fragmentid AS fragmentid, node.documentid AS documentid, node.text AS text,
       vector.similarity.cosine(node.embedding, $vector) AS score
