MATCH (:Dataset {datasetid: $datasetid})-[a:AGGREGATES]->(m)
WHERE coalesce(m.fragmentid, m.documentid) IN $ids
SET a.hidden = $hidden
RETURN count(a) AS changed
