// Full-text hits of one index; $query is an escaped Lucene string built from user text.
CALL db.index.fulltext.queryNodes($index, $query, {limit: $k}) YIELD node, score
WITH node, score
WHERE $documentids IS NULL OR node.documentid IN $documentids
RETURN node.fragmentid AS fragmentid, node.documentid AS documentid, node.text AS text, score
