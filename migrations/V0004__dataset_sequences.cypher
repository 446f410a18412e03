// V0004: one sequence node per (session, kind) numbers datasets "{session}#{kind}_{n}".
// The uniqueness constraint makes a concurrent MERGE of the same sequence safe; the writing
// transaction then takes the node's write lock, so numbers are allocated one at a time.
// Released migrations are never edited: add a new V<n>__<what>.cypher instead.

CREATE CONSTRAINT dataset_sequence_session_kind IF NOT EXISTS
FOR (s:DatasetSequence) REQUIRE (s.session, s.kind) IS UNIQUE;
