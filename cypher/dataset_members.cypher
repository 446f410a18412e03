// One page of a dataset's members, best first, ties by id; hidden ones only when asked.
// Members a partly failed rerank left unscored follow every scored one (retrieved order).
// Texts come back cut to $max_chars characters, with their whole length as `characters`: a
// long chapter costs the server and the client no more than the reader asked for.
MATCH (:Dataset {datasetid: $datasetid})-[a:AGGREGATES]->(m)
WHERE $include_hidden OR NOT coalesce(a.hidden, false)
WITH a, m, coalesce(m.fragmentid, m.documentid) AS id
RETURN id AS fragmentid, m.documentid AS documentid,
       CASE WHEN m:Document THEN null ELSE left(m.text, $max_chars) END AS text,
       CASE WHEN m:Document THEN null ELSE size(m.text) END AS characters,
       left(CASE WHEN m:Document THEN coalesce(m.title, m.documentid) ELSE m.text END,
            $max_chars) AS rerank_text,
       a.weight AS weight, a.original_score AS original_score, a.hidden AS hidden,
       coalesce(a.unscored, false) AS unscored,
       CASE WHEN m:Document THEN 'category' WHEN m:Chapter THEN 'chapters'
            WHEN m:Paragraph THEN 'paragraphs' WHEN m:Summary THEN 'summaries'
            WHEN m:Question THEN 'questions' ELSE 'keywords' END AS source
ORDER BY coalesce(a.unscored, false), a.weight DESC, id
SKIP $skip LIMIT $limit
