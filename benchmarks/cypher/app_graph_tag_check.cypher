// Whether the Tag's documents are exactly those of the stored category: how many documents
// it TAGS, how many of them have the category, and how many documents have the category.
OPTIONAL MATCH (:Tag {name: $value})-[:TAGS]->(d:Document)
WITH collect(DISTINCT d) AS tagged
RETURN size(tagged) AS tagged,
       size([d IN tagged WHERE EXISTS {
         (d)-[:HAS_CATEGORY]->(:Category {name: $category, value: $value}) }]) AS tagged_stored,
       COUNT { (:Category {name: $category, value: $value})<-[:HAS_CATEGORY]-(:Document) }
         AS stored
