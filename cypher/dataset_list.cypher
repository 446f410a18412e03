MATCH (ds:Dataset)
WHERE $session IS NULL OR ds.session = $session
OPTIONAL MATCH (ds)-[:DERIVED_FROM]->(parent:Dataset)
RETURN ds.datasetid AS datasetid, ds.name AS name, ds.kind AS kind, ds.query AS query,
       toString(ds.created_at) AS created_at, ds.session AS session,
       coalesce(ds.weight_scale,
                CASE ds.kind WHEN 'rerank' THEN 'reranker' ELSE 'retrieval' END) AS weight_scale,
       ds.reranked AS reranked, ds.reason AS reason, ds.failures AS failures,
       ds.unscored AS unscored, ds.capped AS capped,
       COUNT { (ds)-[:AGGREGATES]->() } AS members,
       collect(parent.datasetid) AS derived_from
ORDER BY created_at, datasetid
