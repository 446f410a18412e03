// Update chapters that already exist, in place: the node keeps its identity (and so its dataset
// memberships); ordinal, text, embedding and hash are replaced, and its language label
// (r.labels, one or none) replaces any of $language_labels (every language's).
UNWIND $rows AS r
MATCH (c:Chapter {fragmentid: r.fragmentid})
SET c.ordinal = r.ordinal, c.text = r.text, c.embedding = r.embedding,
    c.embedding_hash = r.hash, c.ontologyid = r.ontologyid
REMOVE c:$($language_labels)
SET c:$(r.labels)
