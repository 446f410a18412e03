// Which of $labels (every language's fragment labels, and TextLanguagePending) some node
// carries: db.labels() lists the labels in use from the token and count stores, no scan.
// The per-language text search reads it to know the languages the graph holds.
CALL db.labels() YIELD label
WITH label WHERE label IN $labels
RETURN label
