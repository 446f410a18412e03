// Allocate the next number n for "{session}#{kind}_{n}" atomically, inside the transaction
// that writes the dataset: the sequence node's write lock (taken by the first SET) holds
// concurrent writers of the same session and kind until this transaction ends, and the
// number never goes below the datasets already there (e.g. made before the sequence existed).
MERGE (seq:DatasetSequence {session: $session, kind: $kind})
SET seq.locked = true
WITH seq
OPTIONAL MATCH (ds:Dataset {session: $session, kind: $kind})
WITH seq, coalesce(max(ds.number), 0) AS used
SET seq.last = CASE WHEN coalesce(seq.last, 0) > used THEN seq.last ELSE used END + 1
REMOVE seq.locked
RETURN seq.last AS number
