// Record how a dataset's weights came about (reranked, reason, failures, weight_scale ...),
// in the transaction that creates it, so a Cypher reader can tell a degraded rerank apart.
MATCH (ds:Dataset {datasetid: $datasetid})
SET ds += $flags
