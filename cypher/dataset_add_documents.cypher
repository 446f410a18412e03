// Members that are category stubs point at their Document.
MATCH (ds:Dataset {datasetid: $datasetid})
UNWIND $rows AS r
MATCH (d:Document {documentid: r.id})
CREATE (ds)-[:AGGREGATES {weight: r.weight, hidden: false, original_score: r.original_score,
                          unscored: r.unscored}]->(d)
RETURN count(*) AS added
