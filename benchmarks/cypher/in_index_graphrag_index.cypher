// A range index on the chapters' ontologyid, as a graphrag user filtering on it would create.
CREATE INDEX in_index_chapter_ontologyid IF NOT EXISTS FOR (c:Chapter) ON (c.ontologyid)
