// Create or replace documents: properties replaced, ontology and category links rebuilt.
UNWIND $docs AS doc
MERGE (d:Document {documentid: doc.documentid})
SET d = doc.properties
WITH d, doc
CALL (d) {
  OPTIONAL MATCH (d)-[r:IN_ONTOLOGY|HAS_CATEGORY]->()
  DELETE r
}
FOREACH (ontologyid IN CASE WHEN doc.ontology IS NULL THEN [] ELSE [doc.ontology] END |
  MERGE (o:Ontology {ontologyid: ontologyid})
  MERGE (d)-[:IN_ONTOLOGY]->(o))
FOREACH (c IN doc.categories |
  MERGE (cat:Category {ontologyid: coalesce(doc.ontology, ''), name: c.name, value: c.value})
  MERGE (d)-[:HAS_CATEGORY]->(cat))
