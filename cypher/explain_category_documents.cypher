// The documents of many category [name, value] pairs in one read, for explain: a query with
// thousands of filters is explained with one round trip instead of one per filter.
// $pairs is a list of [name, value]; one row per pair some document has. $ontologyid (or
// null) keeps only documents IN_ONTOLOGY that ontology (the scope's pattern).
// $datasetids (or null): the parent datasets' scope, checked as a pattern: the document (or
// one of its fragments) is a visible member (AGGREGATES, not hidden) of one of them.
UNWIND $pairs AS pair
MATCH (c:Category)
WHERE c.name = pair[0] AND c.value = pair[1]
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
RETURN pair[0] AS name, pair[1] AS value, collect(DISTINCT d.documentid) AS documentids
