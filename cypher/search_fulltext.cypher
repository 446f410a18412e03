// Full-text hits of one index; $query is an escaped Lucene string built from user text.
// The restrictions ($documentids, $ontologyid, $datasetids, $name / $values / $negated,
// $filter; each null for none) are the part _search_restriction, checked as patterns on each
// hit; $details adds the document's details (part _search_details).
CALL db.index.fulltext.queryNodes($index, $query, {limit: $k}) YIELD node, score
{{> search_restriction}}
RETURN node.fragmentid AS fragmentid, node.documentid AS documentid, left(node.text, $max_text) AS text, score,
{{> search_details}}
