// The node counts of search_counts and, in the same round trip, how many documents are
// IN_ONTOLOGY $ontologyid (count store and one degree count, cheap): whether the ontology
// scope must be checked as a pattern, and the selectivity it gives, cost one call.
OPTIONAL MATCH (o:Ontology {ontologyid: $ontologyid})
RETURN COUNT { (:Document) } AS documents,
       COUNT { (:Chapter) } AS chapters,
       COUNT { (:Paragraph) } AS paragraphs,
       COUNT { (:Summary) } AS summaries,
       COUNT { (:Keyword) } AS keywords,
       CASE WHEN o IS NULL THEN 0 ELSE COUNT { (o)<-[:IN_ONTOLOGY]-() } END AS ontology
