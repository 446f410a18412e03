// Update questions that already exist, in place: the node keeps its identity (and so its
// dataset memberships); ordinal, text, embedding and hash are replaced.
UNWIND $rows AS r
MATCH (q:Question {fragmentid: r.fragmentid})
SET q.ordinal = r.ordinal, q.text = r.text, q.embedding = r.embedding,
    q.embedding_hash = r.hash, q.ontologyid = r.ontologyid
