// The index calls of one search_phrase statement alone, with its own parameters
// ($vector_searches, $text_searches, $vector, as the engine passed them): each vector search
// cut to its pool, each full-text search at its limit, every hit as [fragmentid, documentid,
// score, text] (text null unless $texts). No counts, languages, details or fusion: the floor
// of the engine's candidate pools on the server.
UNWIND $vector_searches AS s
CALL (s) {
  CALL db.index.vector.queryNodes(s.index, s.k, $vector) YIELD node, score
  WITH collect([node, score]) AS hits
  UNWIND hits[..s.top_n] AS hit
  WITH hit[0] AS node, hit[1] AS score
  RETURN collect([node.fragmentid, node.documentid, score,
                  CASE WHEN $texts THEN node.text END]) AS hits
}
RETURN hits
UNION ALL
UNWIND $text_searches AS t
CALL (t) {
  CALL db.index.fulltext.queryNodes(t.index, t.query, {limit: t.k}) YIELD node, score
  RETURN collect([node.fragmentid, node.documentid, score,
                  CASE WHEN $texts THEN node.text END]) AS hits
}
RETURN hits
