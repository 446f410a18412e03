// The load benchmark's end check: every fragment stored for the re-ingested documents.
MATCH (f:Fragment) WHERE f.documentid IN $ids
RETURN f.documentid AS documentid, f.fragmentid AS fragmentid, f.text AS text
