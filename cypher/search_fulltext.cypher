// Full-text hits of one index; $query is an escaped Lucene string built from user text.
// Restrictions (each null for none), checked on the hit's document as patterns: $documentids,
// $ontologyid (document IN_ONTOLOGY it), $name / $values (document has one of the values of
// that category, exact match as search_category; with $negated: none of them).
// $filter (or null): a filter of several categories in disjunctive normal form, a list of
// conjunctions of {name, values, negated} literals; the document must satisfy one conjunction
// (every literal: has one of the values, or with negated none of them).
CALL db.index.fulltext.queryNodes($index, $query, {limit: $k}) YIELD node, score
WITH node, score
WHERE ($documentids IS NULL OR node.documentid IN $documentids)
  AND ($ontologyid IS NULL OR EXISTS {
        MATCH (:Document {documentid: node.documentid})-[:IN_ONTOLOGY]->(:Ontology {ontologyid: $ontologyid}) })
  AND ($name IS NULL OR EXISTS {
        MATCH (:Document {documentid: node.documentid})-[:HAS_CATEGORY]->(c:Category)
        WHERE c.name = $name AND c.value IN coalesce($values, []) } <> $negated)
  AND ($filter IS NULL OR any(conj IN $filter WHERE all(lit IN conj WHERE EXISTS {
        MATCH (:Document {documentid: node.documentid})-[:HAS_CATEGORY]->(c:Category)
        WHERE c.name = lit.name AND c.value IN lit.values } <> lit.negated)))
RETURN node.fragmentid AS fragmentid, node.documentid AS documentid, node.text AS text, score
