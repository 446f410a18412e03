// Remove the stored embeddings no cosine search can use (the rules of migrations_bad_vectors):
// such a fragment then has no vector, so searches pass it by until its document is re-ingested.
MATCH (f:Fragment)
WHERE f.embedding IS NOT NULL
WITH f, f.embedding AS v
WITH f, size(v) AS dimensions,
     any(x IN v WHERE isNaN(x) OR abs(x) > $max_abs) AS not_finite,
     reduce(s = 0.0, x IN v | s + x * x) AS square_norm
WHERE dimensions <> $dimensions OR not_finite
   OR NOT (square_norm > $min_square_norm AND square_norm < $max_square_norm)
REMOVE f.embedding
RETURN count(f) AS removed, collect(DISTINCT f.documentid) AS documentids
