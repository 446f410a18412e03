// Documents having any of the listed values for one category name, as one list (one record,
// not one per document: broad categories cover tens of thousands of documents).
// $ontologyid (or null) keeps only documents IN_ONTOLOGY that ontology.
// $datasetids (or null): the parent datasets' scope, checked as a pattern: the document (or
// one of its fragments) is a visible member (AGGREGATES, not hidden) of one of them.
MATCH (c:Category)
WHERE c.name = $name AND c.value IN $values
MATCH (d:Document)-[:HAS_CATEGORY]->(c)
WHERE ($ontologyid IS NULL OR EXISTS { (d)-[:IN_ONTOLOGY]->(:Ontology {ontologyid: $ontologyid}) })
{{#datasetids}}
  AND ($datasetids IS NULL OR EXISTS {
        MATCH (d)<-[a:AGGREGATES]-(ds:Dataset)
        WHERE ds.datasetid IN $datasetids AND NOT coalesce(a.hidden, false) }
      OR EXISTS {
        MATCH (:Fragment {documentid: d.documentid})<-[a:AGGREGATES]-(ds:Dataset)
        WHERE ds.datasetid IN $datasetids AND NOT coalesce(a.hidden, false) })
{{/datasetids}}
RETURN collect(DISTINCT d.documentid) AS documentids
