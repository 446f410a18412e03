// neo4j-graphrag filters on node properties: copy each chapter's SKEW and REGION onto it.
MATCH (c:Chapter)-[:IN_DOCUMENT]->(d:Document)
CALL (c, d) {
  OPTIONAL MATCH (d)-[:HAS_CATEGORY]->(s:Category {name: 'SKEW'})
  OPTIONAL MATCH (d)-[:HAS_CATEGORY]->(r:Category {name: 'REGION'})
  SET c.cat_SKEW = s.value, c.cat_REGION = r.value
} IN TRANSACTIONS OF 10000 ROWS
