// Part: the restrictions every search checks on a candidate fragment `node` (with `score`),
// included by search_vector, search_vector_in_index and search_fulltext. Each is null for none:
// $documentids keeps only fragments of those documents; $ontologyid only those whose
// document is IN_ONTOLOGY that ontology; $datasetids only those whose document (or one of its
// fragments) is a visible member (AGGREGATES, not hidden) of one of those datasets; $name /
// $values only those whose document has one of the values of that category (exact match, as
// search_category), with $negated only those whose document has none of them (a NOT pushed as
// a pattern); $filter, a filter of several categories in disjunctive normal form (a list of
// conjunctions of {name, values, negated} literals), keeps those whose document satisfies one
// conjunction, checked on the document's category keys (name + U+001F + value, read once per
// candidate that reaches the check) against the literal's precomputed keys.
// The category check is a CASE: written as `$name IS NULL OR EXISTS {...} <> $negated`, Neo4j
// ran the EXISTS for every candidate even without a category (a LetSemiApply; on the sample
// graph it scanned every Category node per candidate); a CASE evaluates it only when needed.
// Each restriction reaches the hit's document along its relationships (a paragraph through
// its chapter): on 4,000 candidates that is ~7 ms where a lookup of the document by id
// in the index cost ~40 ms.
WITH node, score
WHERE ($documentids IS NULL OR node.documentid IN $documentids)
  AND ($ontologyid IS NULL OR EXISTS {
        MATCH (node)-[:IN_CHAPTER*0..1]->()-[:IN_DOCUMENT]->(:Document)-[:IN_ONTOLOGY]->(:Ontology {ontologyid: $ontologyid}) })
{{#datasetids}}
  AND ($datasetids IS NULL OR EXISTS {
        MATCH (node)-[:IN_CHAPTER*0..1]->()-[:IN_DOCUMENT]->(:Document)<-[a:AGGREGATES]-(ds:Dataset)
        WHERE ds.datasetid IN $datasetids AND NOT coalesce(a.hidden, false) }
      OR EXISTS {
        MATCH (:Fragment {documentid: node.documentid})<-[a:AGGREGATES]-(ds:Dataset)
        WHERE ds.datasetid IN $datasetids AND NOT coalesce(a.hidden, false) })
{{/datasetids}}
  AND CASE WHEN $name IS NULL THEN true
           ELSE EXISTS {
             MATCH (node)-[:IN_CHAPTER*0..1]->()-[:IN_DOCUMENT]->(:Document)-[:HAS_CATEGORY]->(c:Category)
             WHERE c.name = $name AND c.value IN coalesce($values, []) } <> $negated
      END
  AND ($filter IS NULL OR EXISTS {
        MATCH (node)-[:IN_CHAPTER*0..1]->()-[:IN_DOCUMENT]->(d:Document)
        WITH COLLECT { MATCH (d)-[:HAS_CATEGORY]->(c:Category)
                       RETURN c.name + '\u001f' + c.value } AS keys
        WHERE any(conj IN $filter WHERE all(lit IN conj WHERE
                any(key IN lit.keys WHERE key IN keys) <> lit.negated)) })
