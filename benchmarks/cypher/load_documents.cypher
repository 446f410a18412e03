// The load benchmark's end check: how many Document nodes each id has (1 expected).
UNWIND $ids AS id
OPTIONAL MATCH (d:Document {documentid: id})
RETURN id AS documentid, count(d) AS nodes
