// V0006: every embedded fragment (Chapter, Paragraph, Summary) carries its document's ontology
// as `ontologyid`, the property the 2026.x vector indexes filter on inside the index (V0007):
// a search scoped to an ontology then asks the index for fragments of that ontology only,
// instead of over-fetching and checking each candidate's document. Ingest writes it on every
// create and update (re-ingesting a document into another ontology moves its fragments too);
// this backfills a graph ingested before, in batches, and is a no-op on a fresh database.
// Fragments of a document without an ontology have no `ontologyid`.
MATCH (d:Document)
OPTIONAL MATCH (d)-[:IN_ONTOLOGY]->(o:Ontology)
WITH d, o.ontologyid AS ontologyid
CALL (d, ontologyid) {
  MATCH (f:Fragment {documentid: d.documentid})
  WHERE (f:Chapter OR f:Paragraph OR f:Summary)
    AND NOT coalesce(f.ontologyid = ontologyid, f.ontologyid IS NULL AND ontologyid IS NULL)
  SET f.ontologyid = ontologyid
} IN TRANSACTIONS OF 1000 ROWS
