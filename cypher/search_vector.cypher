// Approximate nearest fragments from one vector index; scores on the index scale (1 + cos) / 2.
// $documentids (or null) keeps only fragments of those documents, after the index lookup.
CALL db.index.vector.queryNodes($index, $k, $vector) YIELD node, score
WITH node, score
WHERE $documentids IS NULL OR node.documentid IN $documentids
RETURN node.fragmentid AS fragmentid, node.documentid AS documentid, node.text AS text, score
