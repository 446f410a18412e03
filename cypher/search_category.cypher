// Documents having any of the listed values for one category name, as one list (one record,
// not one per document: broad categories cover tens of thousands of documents).
MATCH (c:Category)
WHERE c.name = $name AND c.value IN $values
MATCH (d:Document)-[:HAS_CATEGORY]->(c)
RETURN collect(DISTINCT d.documentid) AS documentids
