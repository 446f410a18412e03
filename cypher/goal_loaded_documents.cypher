// A goal's loaded documents in ordinal order, each with its chapters' texts in order, each
// cut to $max_chars characters (the loaded-documents budget), and their whole lengths.
MATCH (:Goal {goalid: $goalid})-[u:LOADS_DOCUMENT]->(d:Document)
RETURN d.documentid AS documentid, coalesce(d.title, d.documentid) AS title,
       COLLECT { MATCH (c:Chapter)-[:IN_DOCUMENT]->(d)
                 RETURN left(c.text, $max_chars) ORDER BY c.ordinal } AS chapters,
       COLLECT { MATCH (c:Chapter)-[:IN_DOCUMENT]->(d)
                 RETURN size(c.text) ORDER BY c.ordinal } AS sizes
ORDER BY u.ordinal
