MATCH (ds:Dataset {datasetid: $datasetid}), (parent:Dataset {datasetid: $parent})
CREATE (ds)-[:DERIVED_FROM]->(parent)
