// One page of a dataset's members, best first, ties by id; hidden ones only when asked.
// Members a partly failed rerank left unscored follow every scored one (retrieved order).
MATCH (:Dataset {datasetid: $datasetid})-[a:AGGREGATES]->(m)
WHERE $include_hidden OR NOT coalesce(a.hidden, false)
WITH a, m, coalesce(m.fragmentid, m.documentid) AS id
RETURN id AS fragmentid, m.documentid AS documentid,
       CASE WHEN m:Document THEN null ELSE m.text END AS text,
       CASE WHEN m:Document THEN coalesce(m.title, m.documentid) ELSE m.text END AS rerank_text,
       a.weight AS weight, a.original_score AS original_score, a.hidden AS hidden,
       coalesce(a.unscored, false) AS unscored,
       CASE WHEN m:Document THEN 'category' WHEN m:Chapter THEN 'chapters'
            WHEN m:Paragraph THEN 'paragraphs' WHEN m:Summary THEN 'summaries'
            WHEN m:Question THEN 'questions' ELSE 'keywords' END AS source
ORDER BY coalesce(a.unscored, false), a.weight DESC, id
SKIP $skip LIMIT $limit
