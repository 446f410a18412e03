// Exact cosine over the fragments of the given documents, same scale as the index: (1 + cos) / 2.
UNWIND $documentids AS documentid
MATCH (node:Fragment {documentid: documentid})
WHERE $label IN labels(node) AND node.embedding IS NOT NULL
WITH node, vector.similarity.cosine(node.embedding, $vector) AS score
ORDER BY score DESC, node.fragmentid
LIMIT $k
RETURN node.fragmentid AS fragmentid, node.documentid AS documentid, node.text AS text, score
