// Members that are fragments; weight = score. original_score kept when the rows carry one.
MATCH (ds:Dataset {datasetid: $datasetid})
UNWIND $rows AS r
MATCH (f:Fragment {fragmentid: r.id})
CREATE (ds)-[:AGGREGATES {weight: r.weight, hidden: false, original_score: r.original_score}]->(f)
RETURN count(*) AS added
