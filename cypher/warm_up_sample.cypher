// What the search warm-up after a bulk ingest (warm_up.py) queries with: one stored chapter
// (its vector, its text, its document's ontology) and the categories with the most and the
// fewest documents (a category's degree is read from the store, not walked).
CALL () {
  MATCH (c:Chapter)
  WHERE c.embedding IS NOT NULL
  RETURN c
  LIMIT 1
}
CALL (c) {
  OPTIONAL MATCH (:Document {documentid: c.documentid})-[:IN_ONTOLOGY]->(o:Ontology)
  RETURN collect(o.ontologyid)[0] AS ontologyid
}
CALL () {
  MATCH (k:Category)
  WITH k, COUNT { (k)<-[:HAS_CATEGORY]-() } AS n
  WHERE n > 0
  ORDER BY n DESC
  WITH collect([k.name, k.value]) AS pairs
  RETURN pairs[0] AS common, pairs[-1] AS rare
}
RETURN c.embedding AS vector, c.text AS text, ontologyid, common, rare
