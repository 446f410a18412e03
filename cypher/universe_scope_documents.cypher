// Every document of the query's scope, for a NOT or TRUE (the only operators that need the
// scope as a set): documents IN_ONTOLOGY $ontologyid (or null: any) that are, with
// $datasetids (or null: no dataset scope), a visible member of one of those parent datasets
// or have a fragment that is. The datasets' members are expanded once, in the server.
CALL () {
{{#datasetids}}
  MATCH (ds:Dataset)-[a:AGGREGATES]->(m)
  WHERE ds.datasetid IN coalesce($datasetids, []) AND NOT coalesce(a.hidden, false)
  MATCH (d:Document {documentid: m.documentid})
  RETURN d
  UNION
{{/datasetids}}
  MATCH (:Ontology {ontologyid: $ontologyid})<-[:IN_ONTOLOGY]-(d:Document)
  WHERE $datasetids IS NULL
  RETURN d
}
WITH d
WHERE $ontologyid IS NULL OR EXISTS { (d)-[:IN_ONTOLOGY]->(:Ontology {ontologyid: $ontologyid}) }
RETURN collect(d.documentid) AS documentids
