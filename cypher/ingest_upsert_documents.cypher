// Create or update documents. The input owns the properties its line gives (doc.given, their
// names): they are set, and those the previous ingest gave (d.ingest_properties) that this
// line no longer gives are removed; the input's named fields ($fields: title, language,
// ontology) count as given by every ingest, recorded or not. Every other property, label and
// relationship of the Document is the application's and stays. Ontology and category links
// are rebuilt, and only links that changed are deleted (unchanged ones stay), so re-ingesting
// an unchanged document takes no locks on the shared Category and Ontology nodes beyond
// MERGE's match.
UNWIND $docs AS doc
MERGE (d:Document {documentid: doc.documentid})
WITH d, doc, [key IN $fields + coalesce(d.ingest_properties, [])
              WHERE NOT key IN doc.given] AS dropped
FOREACH (key IN dropped | REMOVE d[key])
SET d += doc.properties, d.ingest_properties = doc.given
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
