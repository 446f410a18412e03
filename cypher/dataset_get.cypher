MATCH (ds:Dataset {datasetid: $datasetid})
OPTIONAL MATCH (ds)-[:DERIVED_FROM]->(parent:Dataset)
RETURN ds.datasetid AS datasetid, ds.name AS name, ds.kind AS kind, ds.query AS query,
       toString(ds.created_at) AS created_at, ds.session AS session,
       coalesce(ds.weight_scale,
                CASE ds.kind WHEN 'rerank' THEN 'reranker' ELSE 'retrieval' END) AS weight_scale,
       ds.reranked AS reranked, ds.reason AS reason, ds.failures AS failures,
       ds.unscored AS unscored, ds.capped AS capped, ds.source_query AS source_query,
       ds.clauses AS clauses,
       COUNT { (ds)-[:AGGREGATES]->() } AS members,
       COUNT { (ds)-[a:AGGREGATES]->() WHERE a.hidden } AS hidden,
       collect(parent.datasetid) AS derived_from
