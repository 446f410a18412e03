// How many documents a restriction pattern keeps, for the selectivity estimate of a search
// restricted by a pattern instead of an id list (no id is returned). $ontologyid (or null):
// documents IN_ONTOLOGY it; $name / $values (or null): documents having one of the values of
// that category (exact match, as search_category). Both null: every document. The node
// counts of search_counts come along (count store, cheap): the path choice needs them too.
CALL () {
  MATCH (c:Category)
  WHERE $name IS NOT NULL AND c.name = $name AND c.value IN coalesce($values, [])
  MATCH (d:Document)-[:HAS_CATEGORY]->(c)
  WHERE $ontologyid IS NULL OR EXISTS { (d)-[:IN_ONTOLOGY]->(:Ontology {ontologyid: $ontologyid}) }
  RETURN count(DISTINCT d) AS documents
  UNION ALL
  MATCH (o:Ontology {ontologyid: $ontologyid})
  WHERE $name IS NULL
  RETURN COUNT { (o)<-[:IN_ONTOLOGY]-() } AS documents
  UNION ALL
  WITH 1 AS one WHERE $name IS NULL AND $ontologyid IS NULL
  RETURN COUNT { (:Document) } AS documents
}
WITH sum(documents) AS having
RETURN having AS documents_having, COUNT { (:Document) } AS documents,
       COUNT { (:Chapter) } AS chapters, COUNT { (:Paragraph) } AS paragraphs,
       COUNT { (:Summary) } AS summaries, COUNT { (:Keyword) } AS keywords
