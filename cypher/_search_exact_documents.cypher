// Part: the documents an exact cosine search compares the fragments of (included by
// search_vector_exact, search_vector_exact_guarded and search_phrase_filtered, then
// _search_exact_fragments): the documents `d` of the restrictions, each checked against every
// restriction. The rules and parameters are search_vector_exact's.
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
{{#datasetids}}
  UNION
  MATCH (ds:Dataset)-[a:AGGREGATES]->(m)
  WHERE $documentids IS NULL AND ($name IS NULL OR $negated) AND $seeds IS NULL
    AND ds.datasetid IN coalesce($datasetids, []) AND NOT coalesce(a.hidden, false)
  MATCH (d:Document {documentid: m.documentid})
  RETURN d
{{/datasetids}}
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
{{#datasetids}}
  AND ($datasetids IS NULL OR EXISTS {
        MATCH (d)<-[a:AGGREGATES]-(ds:Dataset)
        WHERE ds.datasetid IN $datasetids AND NOT coalesce(a.hidden, false) }
      OR EXISTS {
        MATCH (:Fragment {documentid: d.documentid})<-[a:AGGREGATES]-(ds:Dataset)
        WHERE ds.datasetid IN $datasetids AND NOT coalesce(a.hidden, false) })
{{/datasetids}}
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
