// One phrase's unfiltered searches in one round trip, one row per search with its hits as
// parallel lists (a few rows decode far faster in the driver than hundreds).
// The first row ('size') gives the node counts of every searchable kind (count store, cheap):
// names in fragmentids, counts in scores, so the caller learns them without a call of its own.
// Each entry of $vector_searches ({source, index, k, top_n}) asks its vector index for k
// candidates and keeps the first top_n (the procedure yields best first: no sort); with $rescore (a quantized index, whose
// scores drift) they are rescored with exact cosine on the index scale (1 + cos) / 2 as in
// search_vector; unquantized, the index score is that already. Each entry of $text_searches
// ({source, index, query, k}) runs one full-text index ($query: an escaped Lucene string built
// from user text). A search whose source holds no nodes is not run (no row). Every hit also
// carries its document's stored language (one unique-index lookup each), which the
// language-slots fusion needs, so it costs no round trip of its own ('' for none: collect
// skips nulls, and the lists must stay parallel). With $details (the caller returns documents)
// each row also lists [documentid, properties, ontologyid, categories] of its hits' documents,
// as document_details reads them, so the documents need no round trip of their own (a list of
// its own: collect skips the nulls of $details false, and it need not stay parallel).
// $ontologyid (or null): the scope's ontology, whose size is not known yet. The size row also
// counts its documents ('ontology'); when it holds only part of the documents no search runs
// (the caller searches again with the ontology as a pattern), else the searches are the
// unscoped ones: an ontology holding every document restricts nothing. Only documents are
// IN_ONTOLOGY, so the count is the bound ontology node's degree (no label check, no expand).
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
