// The documents of a graph-defined category's values (graph/category_definitions.py): the
// slot holds the application's pattern as a MATCH over `document`, its $value read from
// thalabus_value, bound here to each of $values (the value is never text in the statement).
// The subquery lets Neo4j start from the pattern's own anchor (a user by name, a court by
// code) instead of every document. $ontologyid and $datasetids (each null for none) keep the
// documents of the query's scope, as search_category does.
UNWIND $values AS thalabus_value
CALL (thalabus_value) {
{{= pattern}}
  RETURN DISTINCT document
}
WITH thalabus_value, document
WHERE document:Document
  AND ($ontologyid IS NULL OR EXISTS { (document)-[:IN_ONTOLOGY]->(:Ontology {ontologyid: $ontologyid}) })
{{#datasetids}}
  AND ($datasetids IS NULL OR EXISTS {
        MATCH (document)<-[a:AGGREGATES]-(ds:Dataset)
        WHERE ds.datasetid IN $datasetids AND NOT coalesce(a.hidden, false) }
      OR EXISTS {
        MATCH (:Fragment {documentid: document.documentid})<-[a:AGGREGATES]-(ds:Dataset)
        WHERE ds.datasetid IN $datasetids AND NOT coalesce(a.hidden, false) })
{{/datasetids}}
RETURN thalabus_value AS value, collect(DISTINCT document.documentid) AS documentids
