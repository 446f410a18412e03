// The documents of a pure filter query (categories under AND / OR / NOT, nothing scored), in
// one statement whose result the caller streams (never one giant list): $filter is the
// query's disjunctive normal form (conjunctions of {name, values, negated, keys} literals, as
// search_vector), its candidates found from $seeds (the [name, value] pairs of one positive
// literal per conjunction) or, null, every document of the scope. The scope is checked as
// patterns: $ontologyid (or null) IN_ONTOLOGY; $datasetids (or null) the document, or one of
// its fragments, is a visible member of one of those parent datasets. Each row carries the
// document's category keys among $keys (the query's own, name + U+001F + value), from which
// the caller derives each stub's contributions without another read. Ordered by document id,
// the order of the stubs (all score 1.0). $details (a boolean): each row also carries the
// document's details as document_details reads them (else null), so a query returning
// documents makes no round trip of its own for them. $limit (section): only the first $limit
// documents in that order, for a query cut to that many results that writes no dataset:
// Neo4j then keeps a top-$limit instead of sorting and sending every match (a 1% filter of
// 200,000 chapters, 2,000 documents: the statement ~8 ms against ~120 ms).
// A branch guarded by parameters only checks its guard in a WITH before its label scan
// (MATCH (d:Document) WHERE <parameters> scanned every document, then filtered).
CALL () {
  UNWIND coalesce($seeds, []) AS seed
  MATCH (c:Category {name: seed[0], value: seed[1]})
  MATCH (d:Document)-[:HAS_CATEGORY]->(c)
  RETURN d
  UNION
  MATCH (:Ontology {ontologyid: $ontologyid})<-[:IN_ONTOLOGY]-(d:Document)
  WHERE $seeds IS NULL
  RETURN d
  UNION
  WITH 1 AS guard
  WHERE $seeds IS NULL AND $ontologyid IS NULL
  MATCH (d:Document)
  RETURN d
}
WITH d
WHERE ($ontologyid IS NULL OR EXISTS { (d)-[:IN_ONTOLOGY]->(:Ontology {ontologyid: $ontologyid}) })
{{#datasetids}}
  AND ($datasetids IS NULL OR EXISTS {
        MATCH (d)<-[a:AGGREGATES]-(ds:Dataset)
        WHERE ds.datasetid IN $datasetids AND NOT coalesce(a.hidden, false) }
      OR EXISTS {
        MATCH (:Fragment {documentid: d.documentid})<-[a:AGGREGATES]-(ds:Dataset)
        WHERE ds.datasetid IN $datasetids AND NOT coalesce(a.hidden, false) })
{{/datasetids}}
WITH d, COLLECT { MATCH (d)-[:HAS_CATEGORY]->(c:Category)
                  RETURN c.name + '\u001f' + c.value } AS keys
WHERE any(conj IN $filter WHERE all(lit IN conj WHERE
        any(key IN lit.keys WHERE key IN keys) <> lit.negated))
RETURN d.documentid AS documentid, [key IN keys WHERE key IN $keys] AS keys,
       CASE WHEN $details THEN [d.documentid, properties(d),
                                [(d)-[:IN_ONTOLOGY]->(o:Ontology) | o.ontologyid][0],
                                [(d)-[:HAS_CATEGORY]->(c:Category) | {name: c.name, value: c.value}]]
       END AS details
ORDER BY documentid
{{#limit}}
LIMIT $limit
{{/limit}}
