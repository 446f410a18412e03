// Stored embeddings that can be reused: same fragment id and same text hash (model + text).
UNWIND $fragments AS f
MATCH (n:Fragment {fragmentid: f.fragmentid})
WHERE n.embedding_hash = f.hash AND n.embedding IS NOT NULL
RETURN n.fragmentid AS fragmentid, n.embedding AS embedding
