// Create or replace documents: properties replaced, ontology and category links rebuilt.
// Only links that changed are deleted (unchanged ones stay), so re-ingesting an unchanged
// document takes no locks on the shared Category and Ontology nodes beyond MERGE's match.
UNWIND $docs AS doc
MERGE (d:Document {documentid: doc.documentid})
SET d = doc.properties
REMOVE d:TextLanguagePending
WITH d, doc
CALL (d, doc) {
  OPTIONAL MATCH (d)-[r:HAS_CATEGORY]->(c:Category)
  WHERE c.ontologyid <> coalesce(doc.ontology, '')
     OR NOT {name: c.name, value: c.value} IN doc.categories
  DELETE r
}
CALL (d, doc) {
  OPTIONAL MATCH (d)-[r:IN_ONTOLOGY]->(o:Ontology)
  WHERE doc.ontology IS NULL OR o.ontologyid <> doc.ontology
  DELETE r
}
FOREACH (ontologyid IN CASE WHEN doc.ontology IS NULL THEN [] ELSE [doc.ontology] END |
  MERGE (o:Ontology {ontologyid: ontologyid})
  MERGE (d)-[:IN_ONTOLOGY]->(o))
FOREACH (c IN doc.categories |
  MERGE (cat:Category {ontologyid: coalesce(doc.ontology, ''), name: c.name, value: c.value})
  MERGE (d)-[:HAS_CATEGORY]->(cat))
