// The stored language of each listed document (null when it has none), for the language-slots
// fusion: one small read per phrase, over the documents of its candidates.
UNWIND $documentids AS documentid
MATCH (d:Document {documentid: documentid})
RETURN d.documentid AS documentid, d.language AS language
