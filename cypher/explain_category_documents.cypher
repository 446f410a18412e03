// The documents of many category [name, value] pairs in one read, for explain: a query with
// thousands of filters is explained with one round trip instead of one per filter.
// $pairs is a list of [name, value]; one row per pair some document has. $ontologyid (or
// null) keeps only documents IN_ONTOLOGY that ontology (the scope's pattern).
UNWIND $pairs AS pair
MATCH (c:Category)
WHERE c.name = pair[0] AND c.value = pair[1]
MATCH (d:Document)-[:HAS_CATEGORY]->(c)
WHERE $ontologyid IS NULL OR EXISTS { (d)-[:IN_ONTOLOGY]->(:Ontology {ontologyid: $ontologyid}) }
RETURN pair[0] AS name, pair[1] AS value, collect(DISTINCT d.documentid) AS documentids
