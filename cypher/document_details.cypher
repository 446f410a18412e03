UNWIND $documentids AS documentid
MATCH (d:Document {documentid: documentid})
OPTIONAL MATCH (d)-[:HAS_CATEGORY]->(c:Category)
OPTIONAL MATCH (d)-[:IN_ONTOLOGY]->(o:Ontology)
RETURN d.documentid AS documentid, properties(d) AS properties, o.ontologyid AS ontology,
       collect(DISTINCT {name: c.name, value: c.value}) AS categories
