// Nearest fragments from one vector index. The index is asked for $k candidates (over-fetch:
// HNSW misses true neighbours, and a filter drops candidates), the best $top_n by index score
// are kept, and those are rescored with exact cosine on the index scale (1 + cos) / 2, so a
// quantized index's drifting scores never differ from the exact path (search_vector_exact).
// Restrictions (each null for none), all checked on the candidate's document as patterns:
// $documentids keeps only fragments of those documents; $ontologyid only those whose
// document is IN_ONTOLOGY that ontology; $name / $values only those whose document has one
// of the values of that category (exact match, as search_category); with $negated, only those
// whose document has none of them (a NOT pushed as a pattern).
// $filter (or null): a filter of several categories in disjunctive normal form, a list of
// conjunctions of {name, values, negated} literals; the document must satisfy one conjunction
// (every literal: has one of the values, or with negated none of them), checked on the
// document's category keys (name + U+001F + value, read once per candidate that reaches the
// check) against the literal's precomputed keys.
// $datasetids (or null): the parent datasets' scope, checked as a pattern: the document (or
// one of its fragments) is a visible member (AGGREGATES, not hidden) of one of them.
// $details (a boolean): each row also carries its document's details as document_details
// reads them ([documentid, properties, ontologyid, categories], else null), so a query
// returning documents makes no round trip of its own for them.
// Each restriction reaches the hit's document along its relationships (a paragraph through
// its chapter): on 4,000 candidates that is ~7 ms where a lookup of the document by id
// in the index cost ~40 ms.
CALL db.index.vector.queryNodes($index, $k, $vector) YIELD node, score
WITH node, score
WHERE ($documentids IS NULL OR node.documentid IN $documentids)
  AND ($ontologyid IS NULL OR EXISTS {
        MATCH (node)-[:IN_CHAPTER*0..1]->()-[:IN_DOCUMENT]->(:Document)-[:IN_ONTOLOGY]->(:Ontology {ontologyid: $ontologyid}) })
  AND ($datasetids IS NULL OR EXISTS {
        MATCH (node)-[:IN_CHAPTER*0..1]->()-[:IN_DOCUMENT]->(:Document)<-[a:AGGREGATES]-(ds:Dataset)
        WHERE ds.datasetid IN $datasetids AND NOT coalesce(a.hidden, false) }
      OR EXISTS {
        MATCH (:Fragment {documentid: node.documentid})<-[a:AGGREGATES]-(ds:Dataset)
        WHERE ds.datasetid IN $datasetids AND NOT coalesce(a.hidden, false) })
  AND ($name IS NULL OR EXISTS {
        MATCH (node)-[:IN_CHAPTER*0..1]->()-[:IN_DOCUMENT]->(:Document)-[:HAS_CATEGORY]->(c:Category)
        WHERE c.name = $name AND c.value IN coalesce($values, []) } <> $negated)
  AND ($filter IS NULL OR EXISTS {
        MATCH (node)-[:IN_CHAPTER*0..1]->()-[:IN_DOCUMENT]->(d:Document)
        WITH COLLECT { MATCH (d)-[:HAS_CATEGORY]->(c:Category)
                       RETURN c.name + '\u001f' + c.value } AS keys
        WHERE any(conj IN $filter WHERE all(lit IN conj WHERE
                any(key IN lit.keys WHERE key IN keys) <> lit.negated)) })
ORDER BY score DESC, node.fragmentid
LIMIT $top_n
RETURN node.fragmentid AS fragmentid, node.documentid AS documentid, node.text AS text,
       vector.similarity.cosine(node.embedding, $vector) AS score,
       CASE WHEN $details THEN COLLECT {
         MATCH (doc:Document {documentid: node.documentid})
         RETURN [doc.documentid, properties(doc),
                 [(doc)-[:IN_ONTOLOGY]->(ont:Ontology) | ont.ontologyid][0],
                 [(doc)-[:HAS_CATEGORY]->(cat:Category) | {name: cat.name, value: cat.value}]]
       }[0] END AS details
