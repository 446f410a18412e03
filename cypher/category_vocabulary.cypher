// The category vocabulary restricted to what one query uses, compared without letter case:
// $names and $values are the query's category names and values, lowercased; $ontologyid the
// asked ontology or null. Returns the stored spellings only: the names that exist, the
// [name, value] pairs among the asked values, and the ontology ids equal to the asked one.
// One read before evaluation, so a misspelt filter is reported instead of matching nothing.
CALL {
  MATCH (c:Category)
  WHERE toLower(c.name) IN $names
  RETURN collect(DISTINCT c.name) AS names,
         collect(DISTINCT CASE WHEN toLower(c.value) IN $values THEN [c.name, c.value] END)
           AS pairs
}
CALL {
  OPTIONAL MATCH (o:Ontology)
  WHERE $ontologyid IS NOT NULL AND toLower(o.ontologyid) = toLower($ontologyid)
  RETURN collect(o.ontologyid) AS ontologies
}
RETURN names, pairs, ontologies
