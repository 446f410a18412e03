// Part: a vector search's rows after the restrictions (included by search_vector and
// search_vector_in_index, followed by the details column): the best $top_n candidates by the
// index's score, rescored with exact cosine on the index scale (1 + cos) / 2, so a quantized
// index's drifting scores never differ from the exact path (search_vector_exact).
ORDER BY score DESC, node.fragmentid
LIMIT $top_n
RETURN node.fragmentid AS fragmentid, node.documentid AS documentid, left(node.text, $max_text) AS text,
       vector.similarity.cosine(node.embedding, $vector) AS score,
