// Stored embeddings no cosine search can use: a wrong dimension, a value that is not a finite
// 32-bit float, or a norm too small or too large ($min_square_norm < |v|^2 < $max_square_norm).
// Counted in full; at most $limit of them listed, by fragmentid.
MATCH (f:Fragment)
WHERE f.embedding IS NOT NULL
WITH f, f.embedding AS v
WITH f, size(v) AS dimensions,
     any(x IN v WHERE isNaN(x) OR abs(x) > $max_abs) AS not_finite,
     reduce(s = 0.0, x IN v | s + x * x) AS square_norm
WITH f, dimensions,
     CASE
       WHEN dimensions <> $dimensions THEN 'dimension'
       WHEN not_finite THEN 'not finite'
       WHEN NOT (square_norm > $min_square_norm AND square_norm < $max_square_norm) THEN 'norm'
     END AS problem
WHERE problem IS NOT NULL
WITH f, dimensions, problem
ORDER BY f.fragmentid
WITH collect({fragmentid: f.fragmentid, documentid: f.documentid, dimensions: dimensions,
              problem: problem}) AS bad
RETURN size(bad) AS total,
       bad[..$limit] AS listed
