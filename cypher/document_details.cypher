// Details of the given documents as ONE row holding a list of [documentid, properties,
// ontologyid, categories] (hundreds of rows decode far slower in the driver than one).
UNWIND $documentids AS documentid
MATCH (d:Document {documentid: documentid})
OPTIONAL MATCH (d)-[:IN_ONTOLOGY]->(o:Ontology)
WITH d, o, [(d)-[:HAS_CATEGORY]->(c:Category) | {name: c.name, value: c.value}] AS categories
RETURN collect([d.documentid, properties(d), o.ontologyid, categories]) AS documents
