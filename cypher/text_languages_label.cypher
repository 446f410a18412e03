// Label the chapters and keywords of backfilled documents with their text language and
// remove the documents' TextLanguagePending mark. Each row: {documentid, chapter_labels,
// keyword_labels} (one label or none); $chapter_labels / $keyword_labels: every language
// label of that kind, removed first. Nodes are only labelled: ids, texts, embeddings and
// dataset memberships stay.
UNWIND $rows AS r
MATCH (d:Document {documentid: r.documentid})
REMOVE d:TextLanguagePending
WITH d, r
CALL (d, r) {
  MATCH (c:Chapter)-[:IN_DOCUMENT]->(d)
  REMOVE c:$($chapter_labels)
  SET c:$(r.chapter_labels)
}
CALL (d, r) {
  MATCH (k:Keyword)-[:IN_DOCUMENT]->(d)
  REMOVE k:$($keyword_labels)
  SET k:$(r.keyword_labels)
}
