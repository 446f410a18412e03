// The fragment ids these documents have now (read under their locks, in the writing
// transaction): which fragments to update in place, create, or delete.
UNWIND $documentids AS documentid
MATCH (f:Fragment {documentid: documentid})
RETURN f.fragmentid AS fragmentid
