// One phrase's unfiltered searches in one round trip. The first rows ('size') give the node
// counts of every searchable kind (count store, cheap), so the caller learns them without a
// call of its own. Each entry of $vector_searches ({source, index, k, top_n}) asks its vector
// index for k candidates and keeps the best top_n by index score; with $rescore (a quantized
// index, whose scores drift) they are rescored with exact cosine on the index scale
// (1 + cos) / 2 as in search_vector; unquantized, the index score is that already. Each
// entry of $text_searches ({source, index, query, k}) runs one full-text index ($query: an
// escaped Lucene string built from user text). A search whose source holds no nodes is not
// run. Every row names its search (kind, source).
WITH COUNT { (:Document) } AS documents, COUNT { (:Chapter) } AS chapters,
     COUNT { (:Paragraph) } AS paragraphs, COUNT { (:Summary) } AS summaries,
     COUNT { (:Keyword) } AS keywords
UNWIND [['documents', documents], ['chapters', chapters], ['paragraphs', paragraphs],
        ['summaries', summaries], ['keywords', keywords]] AS size
RETURN 'size' AS kind, size[0] AS source, null AS fragmentid, null AS documentid,
       null AS text, size[1] AS score
UNION ALL
WITH {chapters: COUNT { (:Chapter) }, paragraphs: COUNT { (:Paragraph) },
      summaries: COUNT { (:Summary) }} AS sizes
UNWIND $vector_searches AS s
WITH s WHERE sizes[s.source] > 0
CALL (s) {
  CALL db.index.vector.queryNodes(s.index, s.k, $vector) YIELD node, score
  WITH node, score
  ORDER BY score DESC, node.fragmentid
  WITH collect([node, score]) AS hits
  UNWIND hits[..s.top_n] AS hit
  RETURN hit[0] AS node, hit[1] AS score
}
RETURN 'semantic' AS kind, s.source AS source, node.fragmentid AS fragmentid,
       node.documentid AS documentid, node.text AS text,
       CASE WHEN $rescore THEN vector.similarity.cosine(node.embedding, $vector)
            ELSE score END AS score
UNION ALL
WITH {chapters: COUNT { (:Chapter) }, keywords: COUNT { (:Keyword) }} AS sizes
UNWIND $text_searches AS t
WITH t WHERE sizes[t.source] > 0
CALL (t) {
  CALL db.index.fulltext.queryNodes(t.index, t.query, {limit: t.k}) YIELD node, score
  RETURN node, score
}
RETURN 'text' AS kind, t.source AS source, node.fragmentid AS fragmentid,
       node.documentid AS documentid, node.text AS text, score
