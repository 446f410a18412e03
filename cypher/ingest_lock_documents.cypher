// Serialise concurrent writers of the same documents: take each Document's write lock first,
// in the caller's sorted order, so two batches sharing documents queue instead of colliding
// (and never deadlock on these locks). MERGE on the unique documentid is safe concurrently.
UNWIND $documentids AS documentid
MERGE (d:Document {documentid: documentid})
SET d.ingest_lock = true
REMOVE d.ingest_lock
RETURN count(d) AS locked
