// Which of $ids are members of the dataset (hidden or not).
MATCH (:Dataset {datasetid: $datasetid})-[:AGGREGATES]->(m)
WITH coalesce(m.fragmentid, m.documentid) AS id
WHERE id IN $ids
RETURN DISTINCT id
