// Which of $labels (every language's fragment labels, and TextLanguagePending) some node
// carries now: one label-index probe each (EXISTS stops at the first node). db.labels() is
// not enough: it also lists labels whose nodes are gone or that a REMOVE only named.
// The per-language text search reads it to know the languages the graph holds.
UNWIND $labels AS label
WITH label WHERE EXISTS { MATCH (n:$(label)) }
RETURN label
