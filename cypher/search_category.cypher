// Documents having any of the listed values for one category name.
MATCH (c:Category)
WHERE c.name = $name AND c.value IN $values
MATCH (d:Document)-[:HAS_CATEGORY]->(c)
RETURN DISTINCT d.documentid AS documentid
