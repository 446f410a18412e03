// Documents having any of the listed values for one category name, as one list (one record,
// not one per document: broad categories cover tens of thousands of documents).
// $ontologyid (or null) keeps only documents IN_ONTOLOGY that ontology.
MATCH (c:Category)
WHERE c.name = $name AND c.value IN $values
MATCH (d:Document)-[:HAS_CATEGORY]->(c)
WHERE $ontologyid IS NULL OR EXISTS { (d)-[:IN_ONTOLOGY]->(:Ontology {ontologyid: $ontologyid}) }
RETURN collect(DISTINCT d.documentid) AS documentids
