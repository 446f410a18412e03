// The categories of the documents a pushed filter's phrase hit (at most its top-N documents),
// as [name, value] pairs per document: the filter side's contributions are computed on them.
UNWIND $documentids AS documentid
MATCH (d:Document {documentid: documentid})-[:HAS_CATEGORY]->(c:Category)
RETURN documentid, collect([c.name, c.value]) AS categories
