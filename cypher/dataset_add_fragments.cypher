// Members that are fragments; weight = score. original_score kept when the rows carry one;
// unscored = true marks a member a partly failed rerank could not score (retrieval weight).
MATCH (ds:Dataset {datasetid: $datasetid})
UNWIND $rows AS r
MATCH (f:Fragment {fragmentid: r.id})
CREATE (ds)-[:AGGREGATES {weight: r.weight, hidden: false, original_score: r.original_score,
                          unscored: r.unscored}]->(f)
RETURN count(*) AS added
