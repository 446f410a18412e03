// Re-ingest: delete only the fragments no longer in the document (doc.keep lists the fragment
// ids it still has); fragments that still exist are updated in place and keep their
// dataset memberships.
UNWIND $docs AS doc
MATCH (f:Fragment {documentid: doc.documentid})
WHERE NOT f.fragmentid IN doc.keep
DETACH DELETE f
RETURN count(*) AS deleted
