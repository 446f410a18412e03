// Nearest fragments of one ontology from an ontology-filtered vector index (Neo4j 2026.01+,
// migrations V0007 and, for questions, V0010): the Cypher 25 SEARCH clause filters on the
// fragments' `ontologyid` inside the index, so the $k candidates all belong to ontology
// $index_ontologyid and none is spent on other ontologies (search_vector must over-fetch by
// the ontology's share of the graph and check each candidate's document). $index names the filtered index; SEARCH takes only a
// literal index name, so each index has its own branch, guarded by $index (one runs).
// The other restrictions (part _search_restriction; $ontologyid is passed null, the index
// already applied it) and the rows (parts _search_vector_top, _search_details) are
// search_vector's. `CYPHER 25` because 2026.x databases still default to Cypher 5.
CYPHER 25
CALL (*) {
  UNWIND CASE WHEN $index = 'typical_rag_ontology' THEN [true] ELSE [] END AS guard
  MATCH (node:Chapter)
    SEARCH node IN (VECTOR INDEX typical_rag_ontology FOR $vector
                    WHERE node.ontologyid = $index_ontologyid LIMIT $k) SCORE AS score
  RETURN node, score
  UNION ALL
  UNWIND CASE WHEN $index = 'paragraphs_ontology' THEN [true] ELSE [] END AS guard
  MATCH (node:Paragraph)
    SEARCH node IN (VECTOR INDEX paragraphs_ontology FOR $vector
                    WHERE node.ontologyid = $index_ontologyid LIMIT $k) SCORE AS score
  RETURN node, score
  UNION ALL
  UNWIND CASE WHEN $index = 'summaries_ontology' THEN [true] ELSE [] END AS guard
  MATCH (node:Summary)
    SEARCH node IN (VECTOR INDEX summaries_ontology FOR $vector
                    WHERE node.ontologyid = $index_ontologyid LIMIT $k) SCORE AS score
  RETURN node, score
  UNION ALL
  UNWIND CASE WHEN $index = 'questions_ontology' THEN [true] ELSE [] END AS guard
  MATCH (node:Question)
    SEARCH node IN (VECTOR INDEX questions_ontology FOR $vector
                    WHERE node.ontologyid = $index_ontologyid LIMIT $k) SCORE AS score
  RETURN node, score
}
{{> search_restriction}}
{{> search_vector_top}}
{{> search_details}}
