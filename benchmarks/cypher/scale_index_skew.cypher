// A range index on the copied property, as a graphrag user filtering on it would create.
CREATE INDEX scale_chapter_cat_skew IF NOT EXISTS FOR (c:Chapter) ON (c.cat_SKEW)
