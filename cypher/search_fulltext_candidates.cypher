// Full-text hits of one index among the restricted documents' fragments of $label: the
// documents of the restrictions (_search_exact_documents, search_vector_exact's parameters
// and rules) and their fragments are collected first, then each hit of the index
// ($query: an escaped Lucene string built from user text, $k hits) is kept when it is one of
// them. The same hits as search_fulltext with the same restrictions, for a restriction whose
// fragments are few: a lookup in the collected fragments instead of a pattern checked on each
// of up to $k hits (plan.cost.choose_text_path). $details adds the document's details.
{{> search_exact_documents}}
WITH d, $label AS label
{{> search_exact_fragments}}
WITH collect(node) AS candidates
CALL db.index.fulltext.queryNodes($index, $query, {limit: $k}) YIELD node, score
WITH node, score
WHERE node IN candidates
RETURN node.fragmentid AS fragmentid, node.documentid AS documentid, left(node.text, $max_text) AS text, score,
{{> search_details}}
