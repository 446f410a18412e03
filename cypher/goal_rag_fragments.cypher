// A goal's own RAG fragments, best first, ties by id; a stub (a Document) has no text.
// Texts come back cut to $max_chars characters, with their whole length as `characters`.
MATCH (:Goal {goalid: $goalid})-[u:USES_FRAGMENT]->(m)
WITH u, m, coalesce(m.fragmentid, m.documentid) AS id
RETURN id AS fragmentid, m.documentid AS documentid,
       CASE WHEN m:Document THEN null ELSE left(m.text, $max_chars) END AS text,
       CASE WHEN m:Document THEN null ELSE size(m.text) END AS characters, u.weight AS weight,
       CASE WHEN m:Document THEN 'category' WHEN m:Chapter THEN 'chapters'
            WHEN m:Paragraph THEN 'paragraphs' WHEN m:Summary THEN 'summaries'
            WHEN m:Question THEN 'questions' ELSE 'keywords' END AS source
ORDER BY u.weight DESC, id
