// Sizes used to estimate the selectivity of a filtered semantic search (count store, cheap).
RETURN COUNT { (:Document) } AS documents,
       COUNT { (:Chapter) } AS chapters,
       COUNT { (:Paragraph) } AS paragraphs,
       COUNT { (:Summary) } AS summaries
