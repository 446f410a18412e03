// A restricted phrase's searches in one round trip, one row per search with its hits as
// parallel lists, as search_phrase returns them (kind, source, fragmentids, documentids,
// texts, scores, languages, details). The plan chose every search's path and k before
// (plan.searches.phrase_plan; search.batch lists which of them this call runs); each branch
// returns what the statement of that path returns on its own, in the same order:
// - the phrase's unrestricted statistics (a 'size' row and, with $vector_searches /
//   $text_searches, 'semantic' and 'text' rows): search_phrase, its rules and parameters;
//   $ontologyid is also the restriction's below (the caller includes the unrestricted
//   searches only when both are null);
// - $exact_searches ({source, label, k}): exact cosine over the restriction's documents'
//   fragments of each label, best k by score then fragmentid ('exact' rows), as
//   search_vector_exact; the documents are found once for every label;
// - $index_searches ({source, index, k, top_n}): the vector index asked for k candidates, the
//   restrictions checked on each, the best top_n kept and rescored with exact cosine
//   ('index' rows), as search_vector; the caller asks again with a larger k when too few
//   passed;
// - $filtered_texts ({source, index, query, k}): full-text hits that pass the restrictions
//   ('filtered_text' rows), as search_fulltext; $candidate_texts ({source, label, index,
//   query, k}): the same, looked up among the restricted documents' fragments of the label,
//   as search_fulltext_candidates (the documents found once, with the exact searches').
// The restriction parameters ($documentids, $ontologyid, $datasetids, $name / $values /
// $negated, $filter / $seeds) are search_vector_exact's and _search_restriction's, the same
// for every search of the call. $details: the index and text hits list their documents'
// details; $exact_details: the exact hits do. A source missing from the rows had no hit.
// A stored vector the cosine cannot compare fails the call, as it fails search_vector_exact;
// the caller then runs the searches one by one.
{{> search_phrase_unrestricted}}
UNION ALL
WITH 1 AS guard
WHERE size($exact_searches) + size($candidate_texts) > 0
{{> search_exact_documents}}
WITH collect(d) AS documents
CALL (documents) {
  UNWIND $exact_searches AS s
  CALL (s, documents) {
    UNWIND documents AS d
    WITH d, s, s.label AS label
{{> search_exact_fragments}}
    WITH s, node
    WHERE node.embedding IS NOT NULL
    WITH s, node, vector.similarity.cosine(node.embedding, $vector) AS score
    ORDER BY score DESC, node.fragmentid
    WITH s, collect([node, score]) AS ranked
    UNWIND ranked[..s.k] AS hit
    WITH hit[0] AS node, hit[1] AS score
    RETURN collect(node.fragmentid) AS fragmentids, collect(node.documentid) AS documentids,
           collect(left(node.text, $max_text)) AS texts, collect(score) AS scores,
           collect(CASE WHEN $exact_details THEN COLLECT {
             MATCH (doc:Document {documentid: node.documentid})
             RETURN [doc.documentid, properties(doc),
                     [(doc)-[:IN_ONTOLOGY]->(ont:Ontology) | ont.ontologyid][0],
                     [(doc)-[:HAS_CATEGORY]->(cat:Category) | {name: cat.name, value: cat.value}]]
           }[0] END) AS details
  }
  RETURN 'exact' AS kind, s.source AS source, fragmentids, documentids, texts, scores, details
  UNION ALL
  UNWIND $candidate_texts AS t
  CALL (t, documents) {
    UNWIND documents AS d
    WITH d, t.label AS label
{{> search_exact_fragments}}
    RETURN collect(node) AS candidates
  }
  CALL (t, candidates) {
    CALL db.index.fulltext.queryNodes(t.index, t.query, {limit: t.k}) YIELD node, score
    WITH node, score
    WHERE node IN candidates
    RETURN collect(node.fragmentid) AS fragmentids, collect(node.documentid) AS documentids,
           collect(left(node.text, $max_text)) AS texts, collect(score) AS scores,
           collect(CASE WHEN $details THEN COLLECT {
             MATCH (doc:Document {documentid: node.documentid})
             RETURN [doc.documentid, properties(doc),
                     [(doc)-[:IN_ONTOLOGY]->(ont:Ontology) | ont.ontologyid][0],
                     [(doc)-[:HAS_CATEGORY]->(cat:Category) | {name: cat.name, value: cat.value}]]
           }[0] END) AS details
  }
  RETURN 'filtered_text' AS kind, t.source AS source, fragmentids, documentids, texts, scores,
         details
}
RETURN kind, source, fragmentids, documentids, texts, scores, [] AS languages, details
UNION ALL
UNWIND $index_searches AS s
CALL (s) {
  CALL db.index.vector.queryNodes(s.index, s.k, $vector) YIELD node, score
{{> search_restriction}}
  WITH node, score
  ORDER BY score DESC, node.fragmentid
  RETURN collect(node) AS ranked
}
CALL (s, ranked) {
  UNWIND ranked[..s.top_n] AS node
  RETURN collect(node.fragmentid) AS fragmentids, collect(node.documentid) AS documentids,
         collect(left(node.text, $max_text)) AS texts,
         collect(vector.similarity.cosine(node.embedding, $vector)) AS scores,
         collect(CASE WHEN $details THEN COLLECT {
           MATCH (doc:Document {documentid: node.documentid})
           RETURN [doc.documentid, properties(doc),
                   [(doc)-[:IN_ONTOLOGY]->(ont:Ontology) | ont.ontologyid][0],
                   [(doc)-[:HAS_CATEGORY]->(cat:Category) | {name: cat.name, value: cat.value}]]
         }[0] END) AS details
}
RETURN 'index' AS kind, s.source AS source, fragmentids, documentids, texts, scores,
       [] AS languages, details
UNION ALL
UNWIND $filtered_texts AS t
CALL (t) {
  CALL db.index.fulltext.queryNodes(t.index, t.query, {limit: t.k}) YIELD node, score
{{> search_restriction}}
  RETURN collect(node.fragmentid) AS fragmentids, collect(node.documentid) AS documentids,
         collect(left(node.text, $max_text)) AS texts, collect(score) AS scores,
         collect(CASE WHEN $details THEN COLLECT {
           MATCH (doc:Document {documentid: node.documentid})
           RETURN [doc.documentid, properties(doc),
                   [(doc)-[:IN_ONTOLOGY]->(ont:Ontology) | ont.ontologyid][0],
                   [(doc)-[:HAS_CATEGORY]->(cat:Category) | {name: cat.name, value: cat.value}]]
         }[0] END) AS details
}
RETURN 'filtered_text' AS kind, t.source AS source, fragmentids, documentids, texts, scores,
       [] AS languages, details
