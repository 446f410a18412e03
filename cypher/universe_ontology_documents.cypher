MATCH (:Ontology {ontologyid: $ontologyid})<-[:IN_ONTOLOGY]-(d:Document)
RETURN d.documentid AS documentid
