// A goal's loaded documents in ordinal order, each with its chapters' texts in order.
MATCH (:Goal {goalid: $goalid})-[u:LOADS_DOCUMENT]->(d:Document)
RETURN d.documentid AS documentid, coalesce(d.title, d.documentid) AS title,
       COLLECT { MATCH (c:Chapter)-[:IN_DOCUMENT]->(d) RETURN c.text ORDER BY c.ordinal }
         AS chapters
ORDER BY u.ordinal
