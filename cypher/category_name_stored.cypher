// Whether ingested documents have category name $name (a graph-defined category may not
// take a stored name: the two would disagree on which documents have a value).
RETURN EXISTS { MATCH (c:Category) WHERE c.name = $name } AS stored
