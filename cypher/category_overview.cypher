// The graph's own vocabulary as an agent reads it (the MCP `categories` tool and the examples
// in the MCP tool descriptions): the category names, most linked first, each with its most
// common values and their document counts; the ontologies; a few short keyword texts.
// $ontologyid (or null) keeps the categories of that ontology's documents: a Category node
// belongs to one ontology ('' for documents without one), so a value's count there is its
// node's degree. A value's count is read from the count store (one HAS_CATEGORY per document,
// MERGEd at ingest); a name's distinct documents are walked for the returned names only.
// $documentids (or null) counts those documents only (an agent's view under a required
// filter): every count then walks from the listed documents, and nothing outside them is
// named. Bounded: at most $max_names names (and ontologies), $max_values values per name and
// $max_keywords keyword texts; names_total, values_total and ontologies_total say how many
// there are. ontology_spellings: the stored ontology ids equal to $ontologyid without letter
// case (empty: no such ontology).
CALL () {
  MATCH (k:Category)
  WHERE $ontologyid IS NULL OR k.ontologyid = $ontologyid
  WITH k.name AS name, k.value AS value,
       sum(CASE WHEN $documentids IS NULL THEN COUNT { (k)<-[:HAS_CATEGORY]-() }
                ELSE COUNT { (k)<-[:HAS_CATEGORY]-(d:Document)
                             WHERE d.documentid IN $documentids } END) AS documents
  WHERE documents > 0
  ORDER BY documents DESC, value
  WITH name, collect({value: value, documents: documents}) AS values, sum(documents) AS links
  ORDER BY links DESC, name
  WITH collect({name: name, values: values}) AS every
  RETURN size(every) AS names_total, every[..$max_names] AS kept
}
CALL (kept) {
  UNWIND kept AS entry
  CALL (entry) {
    MATCH (d:Document)-[:HAS_CATEGORY]->(k:Category {name: entry.name})
    WHERE ($ontologyid IS NULL OR k.ontologyid = $ontologyid)
      AND ($documentids IS NULL OR d.documentid IN $documentids)
    RETURN count(DISTINCT d) AS documents
  }
  RETURN collect({name: entry.name, documents: documents, values_total: size(entry.values),
                  values: entry.values[..$max_values]}) AS names
}
CALL () {
  MATCH (o:Ontology)
  WITH o.ontologyid AS ontologyid,
       CASE WHEN $documentids IS NULL THEN COUNT { (o)<-[:IN_ONTOLOGY]-() }
            ELSE COUNT { (o)<-[:IN_ONTOLOGY]-(d:Document)
                         WHERE d.documentid IN $documentids } END AS documents
  WHERE $documentids IS NULL OR documents > 0
  ORDER BY documents DESC, ontologyid
  WITH collect({ontologyid: ontologyid, documents: documents}) AS every
  RETURN size(every) AS ontologies_total, every[..$max_names] AS ontologies
}
CALL () {
  OPTIONAL MATCH (o:Ontology)
  WHERE $ontologyid IS NOT NULL AND toLower(o.ontologyid) = toLower($ontologyid)
  RETURN collect(o.ontologyid) AS ontology_spellings
}
CALL () {
  MATCH (k:Keyword)
  WHERE size(k.text) <= 40
    AND ($documentids IS NULL OR k.documentid IN $documentids)
  WITH k.text AS text
  LIMIT $max_keywords
  RETURN collect(text) AS keywords
}
RETURN names_total, names, ontologies_total, ontologies, ontology_spellings, keywords,
       CASE WHEN $documentids IS NULL THEN COUNT { (:Document) }
            ELSE size($documentids) END AS documents
