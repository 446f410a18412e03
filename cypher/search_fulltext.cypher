// Full-text hits of one index; $query is an escaped Lucene string built from user text.
// Restrictions (each null for none), checked on the hit's document as patterns: $documentids,
// $ontologyid (document IN_ONTOLOGY it), $name / $values (document has one of the values of
// that category, exact match as search_category; with $negated: none of them).
CALL db.index.fulltext.queryNodes($index, $query, {limit: $k}) YIELD node, score
WITH node, score
WHERE ($documentids IS NULL OR node.documentid IN $documentids)
  AND ($ontologyid IS NULL OR EXISTS {
        MATCH (:Document {documentid: node.documentid})-[:IN_ONTOLOGY]->(:Ontology {ontologyid: $ontologyid}) })
  AND ($name IS NULL OR EXISTS {
        MATCH (:Document {documentid: node.documentid})-[:HAS_CATEGORY]->(c:Category)
        WHERE c.name = $name AND c.value IN coalesce($values, []) } <> $negated)
RETURN node.fragmentid AS fragmentid, node.documentid AS documentid, node.text AS text, score
