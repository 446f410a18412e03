// Part: the body of search_phrase (its rules and parameters), which search_phrase_filtered
// also runs for a restricted phrase's unrestricted statistics. A vector search's optional
// `background` (at most its k) asks for its candidates ranked top_n + 1 .. background too,
// in a 'background' row (ids, texts, scores and their documents' languages; no details): a
// phrase's fusion is fitted and its calibrated background read on a fixed number of its best
// candidates, however few the request keeps. A text search returns its k hits; the caller
// keeps its first top_n as results and fits the fusion on all k.
OPTIONAL MATCH (o:Ontology {ontologyid: $ontologyid})
WITH COUNT { (:Document) } AS documents, COUNT { (:Chapter) } AS chapters,
     COUNT { (:Paragraph) } AS paragraphs, COUNT { (:Summary) } AS summaries,
     COUNT { (:Question) } AS questions, COUNT { (:Keyword) } AS keywords,
     CASE WHEN o IS NULL THEN 0 ELSE COUNT { (o)<-[:IN_ONTOLOGY]-() } END AS ontology
RETURN 'size' AS kind, null AS source,
       ['documents', 'chapters', 'paragraphs', 'summaries', 'questions', 'keywords',
        'ontology'] AS fragmentids,
       COLLECT { MATCH (m:EmbeddingModel) RETURN m.model_id } AS documentids, [] AS texts,
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
  CALL (s, hits) {
    UNWIND hits[..s.top_n] AS hit
    WITH hit[0] AS node, hit[1] AS score
    WITH node, CASE WHEN $rescore THEN vector.similarity.cosine(node.embedding, $vector)
                    ELSE score END AS score
    OPTIONAL MATCH (d:Document {documentid: node.documentid})
    RETURN collect(node.fragmentid) AS fragmentids, collect(node.documentid) AS documentids,
           collect(left(node.text, $max_text)) AS texts, collect(score) AS scores, collect(coalesce(d.language, '')) AS languages,
           collect(CASE WHEN $details AND d IS NOT NULL
                   THEN [d.documentid, properties(d),
                         [(d)-[:IN_ONTOLOGY]->(ont:Ontology) | ont.ontologyid][0],
                         [(d)-[:HAS_CATEGORY]->(c:Category) | {name: c.name, value: c.value}]]
                   END) AS details
  }
  WITH fragmentids, documentids, texts, scores, languages, details,
       hits[s.top_n..coalesce(s.background, 0)] AS beyond
  RETURN fragmentids, documentids, texts, scores, languages, details,
         [hit IN beyond | hit[0].fragmentid] AS background_fragmentids,
         [hit IN beyond | hit[0].documentid] AS background_documentids,
         [hit IN beyond | left(hit[0].text, $max_text)] AS background_texts,
         [hit IN beyond | coalesce(COLLECT {
            MATCH (d:Document {documentid: hit[0].documentid}) RETURN d.language }[0], '')]
           AS background_languages,
         [hit IN beyond | CASE WHEN $rescore
                               THEN vector.similarity.cosine(hit[0].embedding, $vector)
                               ELSE hit[1] END] AS background_scores
}
UNWIND CASE WHEN size(background_scores) > 0 THEN ['semantic', 'background']
            ELSE ['semantic'] END AS kind
RETURN kind, s.source AS source,
       CASE kind WHEN 'semantic' THEN fragmentids ELSE background_fragmentids END
         AS fragmentids,
       CASE kind WHEN 'semantic' THEN documentids ELSE background_documentids END
         AS documentids,
       CASE kind WHEN 'semantic' THEN texts ELSE background_texts END AS texts,
       CASE kind WHEN 'semantic' THEN scores ELSE background_scores END AS scores,
       CASE kind WHEN 'semantic' THEN languages ELSE background_languages END AS languages,
       CASE kind WHEN 'semantic' THEN details ELSE [] END AS details
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
         collect(left(node.text, $max_text)) AS texts, collect(score) AS scores, collect(coalesce(d.language, '')) AS languages,
         collect(CASE WHEN $details AND d IS NOT NULL
                 THEN [d.documentid, properties(d),
                       [(d)-[:IN_ONTOLOGY]->(ont:Ontology) | ont.ontologyid][0],
                       [(d)-[:HAS_CATEGORY]->(c:Category) | {name: c.name, value: c.value}]]
                 END) AS details
}
RETURN 'text' AS kind, t.source AS source, fragmentids, documentids, texts, scores, languages,
       details
