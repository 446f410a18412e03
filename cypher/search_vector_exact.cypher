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
// not looked up by documentid. At 200,000 chapters a 1% category (2,000 chapters) took
// 47 ms, now 39 ms; a paragraph search of a graph without paragraphs 14 ms, now 9 ms.
CALL () {
  UNWIND coalesce($documentids, []) AS documentid
  MATCH (d:Document {documentid: documentid})
  RETURN d
  UNION
  MATCH (c:Category)
  WHERE $documentids IS NULL AND NOT $negated AND c.name = $name
    AND c.value IN coalesce($values, [])
  MATCH (d:Document)-[:HAS_CATEGORY]->(c)
  RETURN d
  UNION
  UNWIND coalesce($seeds, []) AS seed
  MATCH (c:Category {name: seed[0], value: seed[1]})
  WHERE $documentids IS NULL
  MATCH (d:Document)-[:HAS_CATEGORY]->(c)
  RETURN d
  UNION
  MATCH (ds:Dataset)-[a:AGGREGATES]->(m)
  WHERE $documentids IS NULL AND ($name IS NULL OR $negated) AND $seeds IS NULL
    AND ds.datasetid IN coalesce($datasetids, []) AND NOT coalesce(a.hidden, false)
  MATCH (d:Document {documentid: m.documentid})
  RETURN d
  UNION
  MATCH (:Ontology {ontologyid: $ontologyid})<-[:IN_ONTOLOGY]-(d:Document)
  WHERE $documentids IS NULL AND ($name IS NULL OR $negated) AND $seeds IS NULL
    AND $datasetids IS NULL
  RETURN d
  UNION
  WITH 1 AS guard
  WHERE $documentids IS NULL AND $ontologyid IS NULL AND $seeds IS NULL AND $datasetids IS NULL
    AND (($name IS NOT NULL AND $negated) OR $filter IS NOT NULL)
  MATCH (d:Document)
  RETURN d
}
WITH d
WHERE ($ontologyid IS NULL OR EXISTS { (d)-[:IN_ONTOLOGY]->(:Ontology {ontologyid: $ontologyid}) })
  AND ($datasetids IS NULL OR EXISTS {
        MATCH (d)<-[a:AGGREGATES]-(ds:Dataset)
        WHERE ds.datasetid IN $datasetids AND NOT coalesce(a.hidden, false) }
      OR EXISTS {
        MATCH (:Fragment {documentid: d.documentid})<-[a:AGGREGATES]-(ds:Dataset)
        WHERE ds.datasetid IN $datasetids AND NOT coalesce(a.hidden, false) })
  AND CASE WHEN $name IS NULL OR ($documentids IS NULL AND NOT $negated) THEN true
           ELSE EXISTS { MATCH (d)-[:HAS_CATEGORY]->(c:Category)
                         WHERE c.name = $name AND c.value IN coalesce($values, []) } <> $negated
      END
  AND ($filter IS NULL OR EXISTS {
        MATCH (d)
        WITH COLLECT { MATCH (d)-[:HAS_CATEGORY]->(c:Category)
                       RETURN c.name + '\u001f' + c.value } AS keys
        WHERE any(conj IN $filter WHERE all(lit IN conj WHERE
                any(key IN lit.keys WHERE key IN keys) <> lit.negated)) })
CALL (d) {
  UNWIND CASE WHEN $label = 'Paragraph' THEN [] ELSE [true] END AS own
  MATCH (d)<-[:IN_DOCUMENT]-(node)
  WHERE $label IN labels(node)
  RETURN node
  UNION ALL
  UNWIND CASE WHEN $label = 'Paragraph' THEN [true] ELSE [] END AS through_chapter
  MATCH (d)<-[:IN_DOCUMENT]-(:Chapter)<-[:IN_CHAPTER]-(node:Paragraph)
  RETURN node
}
WITH node
WHERE node.embedding IS NOT NULL
  // A stored vector cosine cannot compare (zero or not finite as float32, written before
  // ingest checked vectors) is skipped, as the vector index skips it, instead of failing.
  AND any(x IN node.embedding WHERE abs(x) >= 1e-30)
  AND all(x IN node.embedding WHERE abs(x) <= 3.4e38)
WITH node, vector.similarity.cosine(node.embedding, $vector) AS score
ORDER BY score DESC, node.fragmentid
LIMIT $k
RETURN node.fragmentid AS fragmentid, node.documentid AS documentid, node.text AS text, score,
{{> search_details}}
