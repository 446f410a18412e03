MATCH (d:Document)
RETURN collect(d.documentid) AS documentids
