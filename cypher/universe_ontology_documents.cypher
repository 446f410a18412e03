MATCH (:Ontology {ontologyid: $ontologyid})<-[:IN_ONTOLOGY]-(d:Document)
RETURN collect(d.documentid) AS documentids
