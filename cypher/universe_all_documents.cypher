MATCH (d:Document)
RETURN d.documentid AS documentid
