// Whether ingested documents have category name $name (a graph-defined category may not
// take a stored name: the two would disagree on which documents have a value). A Category
// node no document links to any more (its documents re-ingested without it) is no such name.
RETURN EXISTS { MATCH (c:Category)<-[:HAS_CATEGORY]-(:Document) WHERE c.name = $name } AS stored
