// Exact cosine over the fragments of the restricted documents, same scale as the index:
// (1 + cos) / 2. The documents are found from the most selective restriction given (the id
// list, else the category's documents, else the ontology's), then every restriction is checked:
// $documentids (a list or null), $ontologyid (document IN_ONTOLOGY it, or null), $name /
// $values (document has one of the values of that category, exact match, or null; with
// $negated: none of them, and the documents are then found from the ontology or all documents);
// $filter (or null): a filter of several categories in disjunctive normal form (conjunctions
// of {name, values, negated} literals, one must hold), its documents found from $seeds (the
// [name, value] pairs of one positive literal per conjunction) or, null, the ontology's or all.
// $datasetids (or null): the parent datasets' scope, checked as a pattern (its members
// seed the candidates before the ontology's): the document (or
// one of its fragments) is a visible member (AGGREGATES, not hidden) of one of them.
// $details (a boolean): each row also carries its document's details as document_details
// reads them ([documentid, properties, ontologyid, categories], else null), so a query
// returning documents makes no round trip of its own for them.
// A branch guarded by parameters only checks its guard in a WITH before its label scan
// (MATCH (d:Document) WHERE <parameters> scanned every document, then filtered).
// The category check is skipped where it holds by construction: without $documentids and
// not negated, every document came from the category's own branch (the other branches are
// guarded off, and $seeds comes only without $name). It sits in a CASE: inside an OR the
// planner ran its EXISTS for every document anyway. A document's fragments are reached
// along their relationships (a paragraph through its chapter, each way guarded by $label),
// not looked up by documentid.
// A stored vector the cosine cannot compare (zero, or not finite as float32: written before
// ingest checked vectors, and not yet removed by `migrations repair-vectors`) fails this
// statement; the search then runs search_vector_exact_guarded, which skips such vectors as
// the vector index does. The check costs two passes over every candidate's vector, so the
// common case does without it.
{{> search_exact_documents}}
WITH d, $label AS label
{{> search_exact_fragments}}
WITH node
WHERE node.embedding IS NOT NULL
WITH node, vector.similarity.cosine(node.embedding, $vector) AS score
ORDER BY score DESC, node.fragmentid
LIMIT $k
RETURN node.fragmentid AS fragmentid, node.documentid AS documentid, left(node.text, $max_text) AS text, score,
{{> search_details}}
