// Update chapters that already exist, in place: the node keeps its identity (and so its dataset
// memberships); ordinal, text, embedding and hash are replaced.
UNWIND $rows AS r
MATCH (c:Chapter {fragmentid: r.fragmentid})
SET c.ordinal = r.ordinal, c.text = r.text, c.embedding = r.embedding,
    c.embedding_hash = r.hash, c.ontologyid = r.ontologyid
