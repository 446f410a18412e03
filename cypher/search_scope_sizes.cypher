// The node counts of search_counts and, in the same round trip, how many documents the scope
// keeps: IN_ONTOLOGY $ontologyid (one degree count, cheap) and, with $datasetids (or null), a
// visible member (or having a fragment that is one) of one of those parent datasets. Whether
// the scope must be checked as a pattern, and the selectivity it gives, cost one call; no
// document id is returned.
OPTIONAL MATCH (o:Ontology {ontologyid: $ontologyid})
{{#datasetids}}
CALL (o) {
  MATCH (ds:Dataset)-[a:AGGREGATES]->(m)
  WHERE ds.datasetid IN coalesce($datasetids, []) AND NOT coalesce(a.hidden, false)
  WITH DISTINCT m.documentid AS documentid
  MATCH (d:Document {documentid: documentid})
  WHERE $ontologyid IS NULL OR (o IS NOT NULL AND EXISTS { (d)-[:IN_ONTOLOGY]->(o) })
  RETURN count(d) AS in_datasets
}
{{/datasetids}}
RETURN COUNT { (:Document) } AS documents,
       COUNT { (:Chapter) } AS chapters,
       COUNT { (:Paragraph) } AS paragraphs,
       COUNT { (:Summary) } AS summaries,
       COUNT { (:Question) } AS questions,
       COUNT { (:Keyword) } AS keywords,
       CASE
{{#datasetids}}
            WHEN $datasetids IS NOT NULL THEN in_datasets
{{/datasetids}}
            WHEN $ontologyid IS NULL THEN COUNT { (:Document) }
            WHEN o IS NULL THEN 0 ELSE COUNT { (o)<-[:IN_ONTOLOGY]-() } END AS scope
