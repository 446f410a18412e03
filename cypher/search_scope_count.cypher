// How many documents a restriction pattern keeps, for the selectivity estimate of a search
// restricted by a pattern instead of an id list (no id is returned). $ontologyid (or null):
// documents IN_ONTOLOGY it; $name / $values (or null): documents having one of the values of
// that category (exact match, as search_category); $filter (or null): documents satisfying a
// filter of several categories in disjunctive normal form (the documents of $seeds, one
// positive literal per conjunction, else every document, checked on their category keys). All
// null: every document. $datasetids (or null): only documents that are (or have a fragment
// that is) a visible member of one of those datasets, the parent-dataset scope as a pattern. The node counts of search_counts come along (count store, cheap):
// the path choice needs them too.
// Unscoped, one value's count is its Category node's degree (one HAS_CATEGORY per document,
// MERGEd at ingest): no walk over the documents of a broad category. Unscoped, a filter with
// seeds counts the sum of its seed values' degrees: an upper bound (every match has one seed
// value), as category_vocabulary counts it.
// A branch guarded by parameters only checks its guard in a WITH before its label scan
// (MATCH (d:Document) WHERE <parameters> scanned every document, then filtered).
CALL () {
  MATCH (c:Category)
  WHERE $name IS NOT NULL AND $ontologyid IS NULL AND $datasetids IS NULL
    AND coalesce(size($values), 0) = 1 AND c.name = $name AND c.value = $values[0]
  RETURN COUNT { (c)<-[:HAS_CATEGORY]-() } AS documents
  UNION ALL
  MATCH (c:Category)
  WHERE $name IS NOT NULL
    AND NOT ($ontologyid IS NULL AND $datasetids IS NULL AND coalesce(size($values), 0) = 1)
    AND c.name = $name AND c.value IN coalesce($values, [])
  MATCH (d:Document)-[:HAS_CATEGORY]->(c)
  WHERE ($ontologyid IS NULL OR EXISTS { (d)-[:IN_ONTOLOGY]->(:Ontology {ontologyid: $ontologyid}) })
    AND ($datasetids IS NULL OR EXISTS {
          MATCH (d)<-[a:AGGREGATES]-(ds:Dataset)
          WHERE ds.datasetid IN $datasetids AND NOT coalesce(a.hidden, false) }
        OR EXISTS {
          MATCH (:Fragment {documentid: d.documentid})<-[a:AGGREGATES]-(ds:Dataset)
          WHERE ds.datasetid IN $datasetids AND NOT coalesce(a.hidden, false) })
  RETURN count(DISTINCT d) AS documents
  UNION ALL
  MATCH (o:Ontology {ontologyid: $ontologyid})
  WHERE $name IS NULL AND $filter IS NULL AND $datasetids IS NULL
  RETURN COUNT { (o)<-[:IN_ONTOLOGY]-() } AS documents
  UNION ALL
  MATCH (ds:Dataset)-[a:AGGREGATES]->(m)
  WHERE $name IS NULL AND $filter IS NULL AND ds.datasetid IN coalesce($datasetids, [])
    AND NOT coalesce(a.hidden, false)
  WITH DISTINCT m.documentid AS documentid
  MATCH (d:Document {documentid: documentid})
  WHERE $ontologyid IS NULL OR EXISTS { (d)-[:IN_ONTOLOGY]->(:Ontology {ontologyid: $ontologyid}) }
  RETURN count(d) AS documents
  UNION ALL
  WITH 1 AS one
  WHERE $name IS NULL AND $ontologyid IS NULL AND $filter IS NULL AND $datasetids IS NULL
  RETURN COUNT { (:Document) } AS documents
  UNION ALL
  UNWIND CASE WHEN $filter IS NOT NULL AND $ontologyid IS NULL AND $datasetids IS NULL
              THEN coalesce($seeds, []) ELSE [] END AS seed
  MATCH (c:Category {name: seed[0], value: seed[1]})
  RETURN COUNT { (c)<-[:HAS_CATEGORY]-() } AS documents
  UNION ALL
  CALL () {
    UNWIND CASE WHEN $ontologyid IS NULL AND $datasetids IS NULL THEN []
                ELSE coalesce($seeds, []) END AS seed
    MATCH (c:Category {name: seed[0], value: seed[1]})
    MATCH (d:Document)-[:HAS_CATEGORY]->(c)
    RETURN DISTINCT d
    UNION
    WITH 1 AS guard
    WHERE $filter IS NOT NULL AND $seeds IS NULL
    MATCH (d:Document)
    RETURN d
  }
  WITH d WHERE $filter IS NOT NULL
    AND ($ontologyid IS NULL OR EXISTS { (d)-[:IN_ONTOLOGY]->(:Ontology {ontologyid: $ontologyid}) })
    AND ($datasetids IS NULL OR EXISTS {
          MATCH (d)<-[a:AGGREGATES]-(ds:Dataset)
          WHERE ds.datasetid IN $datasetids AND NOT coalesce(a.hidden, false) }
        OR EXISTS {
          MATCH (:Fragment {documentid: d.documentid})<-[a:AGGREGATES]-(ds:Dataset)
          WHERE ds.datasetid IN $datasetids AND NOT coalesce(a.hidden, false) })
  WITH d, COLLECT { MATCH (d)-[:HAS_CATEGORY]->(c:Category)
                    RETURN c.name + '\u001f' + c.value } AS keys
  WHERE any(conj IN $filter WHERE all(lit IN conj WHERE
          any(key IN lit.keys WHERE key IN keys) <> lit.negated))
  RETURN count(d) AS documents
}
WITH sum(documents) AS having
RETURN having AS documents_having, COUNT { (:Document) } AS documents,
       COUNT { (:Chapter) } AS chapters, COUNT { (:Paragraph) } AS paragraphs,
       COUNT { (:Summary) } AS summaries, COUNT { (:Keyword) } AS keywords
