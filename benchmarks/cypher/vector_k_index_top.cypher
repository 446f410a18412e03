// The vector index's own top $n of $k candidates, ties by fragment id (vector_k_scale).
CALL db.index.vector.queryNodes($index, $k, $vector) YIELD node, score
RETURN node.fragmentid AS fragmentid, score
ORDER BY score DESC, fragmentid
LIMIT $n
