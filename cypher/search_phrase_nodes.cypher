// One phrase's unrestricted searches as the procedure plugin reads them (thalabus.phrase,
// thalabus.phraseResult; the plugin copies this file into its jar): the searches, sizes and
// rows of search_phrase for an unscoped phrase, with each search's hit nodes in place of their
// properties. Inside the server the plugin reads a hit's ids and text, and its document's
// language once per document, through the procedure API, by search_phrase's rules (the text
// cut to MAX_RESULT_TEXT_CHARS, no language for a missing or empty one): a property read there
// costs a fraction of this statement reading, converting and collecting the same values.
// Columns: kind ('size', 'semantic', 'background', 'text'), source, nodes, scores, and for the
// size row the counted kinds in names (their counts in scores) and the stored vectors' models.
WITH COUNT { (:Document) } AS documents, COUNT { (:Chapter) } AS chapters,
     COUNT { (:Paragraph) } AS paragraphs, COUNT { (:Summary) } AS summaries,
     COUNT { (:Question) } AS questions, COUNT { (:Keyword) } AS keywords
RETURN 'size' AS kind, null AS source, [] AS nodes,
       [documents, chapters, paragraphs, summaries, questions, keywords] AS scores,
       ['documents', 'chapters', 'paragraphs', 'summaries', 'questions', 'keywords'] AS names,
       COLLECT { MATCH (m:EmbeddingModel) RETURN m.model_id } AS models
UNION ALL
WITH {chapters: COUNT { (:Chapter) }, paragraphs: COUNT { (:Paragraph) },
      summaries: COUNT { (:Summary) }, questions: COUNT { (:Question) }} AS sizes
UNWIND $vector_searches AS s
WITH s WHERE sizes[s.source] > 0
CALL (s) {
  CALL db.index.vector.queryNodes(s.index, s.k, $vector) YIELD node, score
  WITH collect([node, score]) AS hits
  WITH hits[..s.top_n] AS pool, hits[s.top_n..coalesce(s.background, 0)] AS beyond
  RETURN [hit IN pool | hit[0]] AS nodes,
         [hit IN pool | CASE WHEN $rescore
                             THEN vector.similarity.cosine(hit[0].embedding, $vector)
                             ELSE hit[1] END] AS scores,
         [hit IN beyond | hit[0]] AS background_nodes,
         [hit IN beyond | CASE WHEN $rescore
                               THEN vector.similarity.cosine(hit[0].embedding, $vector)
                               ELSE hit[1] END] AS background_scores
}
UNWIND CASE WHEN size(background_scores) > 0 THEN ['semantic', 'background']
            ELSE ['semantic'] END AS kind
RETURN kind, s.source AS source,
       CASE kind WHEN 'semantic' THEN nodes ELSE background_nodes END AS nodes,
       CASE kind WHEN 'semantic' THEN scores ELSE background_scores END AS scores,
       [] AS names, [] AS models
UNION ALL
WITH {chapters: COUNT { (:Chapter) }, keywords: COUNT { (:Keyword) }} AS sizes
UNWIND $text_searches AS t
WITH t WHERE sizes[t.source] > 0
CALL (t) {
  CALL db.index.fulltext.queryNodes(t.index, t.query, {limit: t.k}) YIELD node, score
  RETURN collect(node) AS nodes, collect(score) AS scores
}
RETURN 'text' AS kind, t.source AS source, nodes, scores, [] AS names, [] AS models
