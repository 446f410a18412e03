// Part: the body of search_phrase (its rules and parameters), which search_phrase_filtered
// also runs for a restricted phrase's unrestricted statistics.
OPTIONAL MATCH (o:Ontology {ontologyid: $ontologyid})
WITH COUNT { (:Document) } AS documents, COUNT { (:Chapter) } AS chapters,
     COUNT { (:Paragraph) } AS paragraphs, COUNT { (:Summary) } AS summaries,
     COUNT { (:Question) } AS questions, COUNT { (:Keyword) } AS keywords,
     CASE WHEN o IS NULL THEN 0 ELSE COUNT { (o)<-[:IN_ONTOLOGY]-() } END AS ontology
RETURN 'size' AS kind, null AS source,
       ['documents', 'chapters', 'paragraphs', 'summaries', 'questions', 'keywords',
        'ontology'] AS fragmentids,
       [] AS documentids, [] AS texts,
       [documents, chapters, paragraphs, summaries, questions, keywords, ontology] AS scores,
       [] AS languages, [] AS details
UNION ALL
OPTIONAL MATCH (o:Ontology {ontologyid: $ontologyid})
WITH {chapters: COUNT { (:Chapter) }, paragraphs: COUNT { (:Paragraph) },
      summaries: COUNT { (:Summary) }, questions: COUNT { (:Question) }} AS sizes,
     $ontologyid IS NULL OR (o IS NOT NULL
       AND COUNT { (o)<-[:IN_ONTOLOGY]-() } >= COUNT { (:Document) }) AS whole
UNWIND $vector_searches AS s
WITH s WHERE sizes[s.source] > 0 AND whole
CALL (s) {
  CALL db.index.vector.queryNodes(s.index, s.k, $vector) YIELD node, score
  WITH collect([node, score]) AS hits
  UNWIND hits[..s.top_n] AS hit
  WITH hit[0] AS node, hit[1] AS score
  WITH node, CASE WHEN $rescore THEN vector.similarity.cosine(node.embedding, $vector)
                  ELSE score END AS score
  OPTIONAL MATCH (d:Document {documentid: node.documentid})
  RETURN collect(node.fragmentid) AS fragmentids, collect(node.documentid) AS documentids,
         collect(node.text) AS texts, collect(score) AS scores, collect(coalesce(d.language, '')) AS languages,
         collect(CASE WHEN $details AND d IS NOT NULL
                 THEN [d.documentid, properties(d),
                       [(d)-[:IN_ONTOLOGY]->(ont:Ontology) | ont.ontologyid][0],
                       [(d)-[:HAS_CATEGORY]->(c:Category) | {name: c.name, value: c.value}]]
                 END) AS details
}
RETURN 'semantic' AS kind, s.source AS source, fragmentids, documentids, texts, scores,
       languages, details
UNION ALL
OPTIONAL MATCH (o:Ontology {ontologyid: $ontologyid})
WITH {chapters: COUNT { (:Chapter) }, keywords: COUNT { (:Keyword) }} AS sizes,
     $ontologyid IS NULL OR (o IS NOT NULL
       AND COUNT { (o)<-[:IN_ONTOLOGY]-() } >= COUNT { (:Document) }) AS whole
UNWIND $text_searches AS t
WITH t WHERE sizes[t.source] > 0 AND whole
CALL (t) {
  CALL db.index.fulltext.queryNodes(t.index, t.query, {limit: t.k}) YIELD node, score
  OPTIONAL MATCH (d:Document {documentid: node.documentid})
  RETURN collect(node.fragmentid) AS fragmentids, collect(node.documentid) AS documentids,
         collect(node.text) AS texts, collect(score) AS scores, collect(coalesce(d.language, '')) AS languages,
         collect(CASE WHEN $details AND d IS NOT NULL
                 THEN [d.documentid, properties(d),
                       [(d)-[:IN_ONTOLOGY]->(ont:Ontology) | ont.ontologyid][0],
                       [(d)-[:HAS_CATEGORY]->(c:Category) | {name: c.name, value: c.value}]]
                 END) AS details
}
RETURN 'text' AS kind, t.source AS source, fragmentids, documentids, texts, scores, languages,
       details
