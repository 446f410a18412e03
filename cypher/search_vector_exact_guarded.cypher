// Exact cosine as search_vector_exact (same parameters and rows), skipping a stored vector
// the cosine cannot compare (zero, or not finite as float32) as the vector index skips
// it: the retry of search_vector_exact when a stored vector made it fail.
{{> search_exact_documents}}
WITH d, $label AS label
{{> search_exact_fragments}}
WITH node
WHERE node.embedding IS NOT NULL
  AND any(x IN node.embedding WHERE abs(x) >= 1e-30)
  AND all(x IN node.embedding WHERE abs(x) <= 3.4e38)
WITH node, vector.similarity.cosine(node.embedding, $vector) AS score
ORDER BY score DESC, node.fragmentid
LIMIT $k
RETURN node.fragmentid AS fragmentid, node.documentid AS documentid, left(node.text, $max_text) AS text, score,
{{> search_details}}
