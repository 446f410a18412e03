// Update summaries that already exist, in place: the node keeps its identity (and so its dataset
// memberships); ordinal, text, embedding and hash are replaced.
UNWIND $rows AS r
MATCH (s:Summary {fragmentid: r.fragmentid})
SET s.ordinal = r.ordinal, s.text = r.text, s.embedding = r.embedding,
    s.embedding_hash = r.hash, s.ontologyid = r.ontologyid
