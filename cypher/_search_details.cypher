// Part: the `details` column of a search row (included as the last RETURN item by search_vector,
// search_vector_in_index, search_vector_exact and search_fulltext). With
// $details (a boolean) it is the hit's document as document_details reads it ([documentid,
// properties, ontologyid, categories]), else null, so a query returning documents makes no
// round trip of its own for them.
       CASE WHEN $details THEN COLLECT {
         MATCH (doc:Document {documentid: node.documentid})
         RETURN [doc.documentid, properties(doc),
                 [(doc)-[:IN_ONTOLOGY]->(ont:Ontology) | ont.ontologyid][0],
                 [(doc)-[:HAS_CATEGORY]->(cat:Category) | {name: cat.name, value: cat.value}]]
       }[0] END AS details
