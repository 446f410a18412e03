// Re-ingest: delete only the fragments no longer in their document; fragments that still
// exist are updated in place and keep their dataset memberships.
UNWIND $fragmentids AS fragmentid
MATCH (f:Fragment {fragmentid: fragmentid})
DETACH DELETE f
RETURN count(*) AS deleted
