// Sizes used to estimate the selectivity of a filtered semantic search and to skip searches
// of sources that hold no fragments (count store, cheap).
RETURN COUNT { (:Document) } AS documents,
       COUNT { (:Chapter) } AS chapters,
       COUNT { (:Paragraph) } AS paragraphs,
       COUNT { (:Summary) } AS summaries,
       COUNT { (:Question) } AS questions,
       COUNT { (:Keyword) } AS keywords
