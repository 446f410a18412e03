// The category vocabulary restricted to what one query uses, compared without letter case:
// $names and $values are the query's category names and values, lowercased; $ontologyid the
// asked ontology or null. Returns the stored spellings only: the names that exist, the
// [name, value] pairs among the asked values, and the ontology ids equal to the asked one.
// One read before evaluation, so a misspelt filter is reported instead of matching nothing.
// The scan (only when a pair is not stored as written) also returns the spellings a typo's
// suggestion is chosen from: every category name, graph-defined ones too (known_names), and
// the [name, value] pairs of the asked names (known_pairs), at most 1,000 of each; an asked
// ontology not stored as written likewise gets every ontology id (known_ontologies, at most
// 1,000).
// A pattern the plan counts at run time (one not read with the vocabulary) is counted by this
// statement too, with no names or pairs: one copy of the counting rules.
// When every [name, value] pair of the query ($exact_pairs, as written; $exact_names their
// names) is stored as written, those are the answer (index seeks); only otherwise are the
// categories scanned without letter case (every Category node: 3,900 at 200,000 chapters).
// The same round trip returns what the plan reads first (search_scope_sizes): the node
// counts and how many documents the scope keeps, IN_ONTOLOGY $ontologyid and, with
// $datasetids (or null), a visible member (or having a fragment that is one) of one of those
// parent datasets: a scoped query then makes no round trip of its own for them. With
// $datasetids, sizes.datasets_found is how many of those datasets exist (the caller names an
// unknown one; the scope's own check then needs no round trip either).
// defined: the [name, pattern] of each name of the query an application defined by a graph
// pattern (graph/category_definitions.py), by name: the plan lists such a category's documents
// by its pattern, and a carried read whose definitions changed plans the query again.
// $patterns: the category patterns the plan pushes into its phrases (the search statements'
// pattern parameters as maps: {name, values, negated} of one category, or {filter, seeds} of
// a filter in normal form); counts[i] is how many documents of the scope have patterns[i]
// (negated is applied by the caller), the selectivity its searches are planned with; a
// scope holding every document is not checked (as the searches do not check it). Unscoped,
// one value's count is its Category node's degree (one HAS_CATEGORY per document, MERGEd at
// ingest): no walk over the documents of a broad category. Without parent datasets, a
// filter with seeds counts the sum of its seed values' degrees, an upper bound of its
// documents (every match has one seed value; the plan caps it at the scope's size), not the
// exact count, which walked every seed document's categories (112 ms for the nested shape at
// 200,000 chapters, 50 ms within an ontology of 50,000): the search over-fetches from it and
// asks again when the estimate was too high. Unscoped, a filter without seeds (a conjunction of
// negated literals only) counts, per conjunction, the documents less the largest degree among
// its negated values (those documents are excluded; no smaller than its positive literals'
// documents when it has some), summed: also an upper bound (a value's degree is summed over
// its Category nodes, one per ontology), where an exact count walks every document's
// categories (1.2 s at 200,000 chapters for NOT a AND NOT b).
// Scoped to an ontology, a pattern of values is counted exactly from the cheapest side
// ($way): the ontology's documents when they are no more than the values' documents
// ('inside'); for one value, when fewer documents lie outside the ontology than have the
// value, its degree less its documents in the other ontologies, walked from those ('outside':
// 3 ms instead of 99 for a value of 25,000 documents in an ontology of 50,000 of 50,160; exact
// when every document is IN_ONTOLOGY one ontology: the relationship count, from the count
// store, equals the document count); else the values' documents ('walk').
// The branch of a filter without seeds checks its guard in an UNWIND before its label scan
// (MATCH (d:Document) WHERE <guard> scanned every document, then filtered; WITH p WHERE
// <guard> was planned after the scan too).
// pair_counts: [name, value, documents] of each [name, value] pair of the query as written
// ($exact_pairs, in their order): the degrees of its Category nodes (one per ontology), from
// the count store, 0 for a pair not stored. The plan orders a filter pattern's literals by
// them (plan/seeds.py), so its seeds are its smallest literals.
CALL () {
  UNWIND $exact_pairs AS pair
  MATCH (c:Category {name: pair[0], value: pair[1]})
  RETURN count(DISTINCT pair) = size($exact_pairs) AS exact
}
CALL (exact) {
  UNWIND CASE WHEN exact THEN [] ELSE [true] END AS scan
  MATCH (c:Category)
  WITH c, toLower(c.name) IN $names AS asked
  WITH collect(DISTINCT CASE WHEN asked THEN c.name END) AS scanned_names,
       collect(DISTINCT CASE WHEN asked AND toLower(c.value) IN $values
                             THEN [c.name, c.value] END) AS scanned_pairs,
       collect(DISTINCT c.name)[..1000] AS stored_names,
       collect(DISTINCT CASE WHEN asked THEN [c.name, c.value] END)[..1000] AS known_pairs
  // a misspelt graph-defined name gets its "did you mean" too (only when the scan runs)
  RETURN scanned_names, scanned_pairs, known_pairs,
         stored_names + CASE WHEN exact THEN [] ELSE
           COLLECT { MATCH (d:CategoryDefinition) RETURN d.name LIMIT 1000 } END AS known_names
}
CALL () {
  UNWIND range(0, size($exact_pairs) - 1) AS i
  OPTIONAL MATCH (c:Category {name: $exact_pairs[i][0], value: $exact_pairs[i][1]})
  WITH i, sum(CASE WHEN c IS NULL THEN 0 ELSE COUNT { (c)<-[:HAS_CATEGORY]-() } END) AS n
  ORDER BY i
  RETURN collect([$exact_pairs[i][0], $exact_pairs[i][1], n]) AS pair_counts
}
WITH CASE WHEN exact THEN $exact_names ELSE scanned_names END AS names,
     CASE WHEN exact THEN $exact_pairs ELSE scanned_pairs END AS pairs,
     known_names, known_pairs, pair_counts
CALL () {
  OPTIONAL MATCH (o:Ontology)
  WHERE $ontologyid IS NOT NULL AND toLower(o.ontologyid) = toLower($ontologyid)
  RETURN collect(o.ontologyid) AS ontologies
}
CALL (ontologies) {
  UNWIND CASE WHEN $ontologyid IS NOT NULL AND NOT $ontologyid IN ontologies
              THEN [true] ELSE [] END AS scan
  MATCH (o:Ontology)
  RETURN collect(o.ontologyid)[..1000] AS known_ontologies
}
CALL () {
  OPTIONAL MATCH (o:Ontology {ontologyid: $ontologyid})
{{#datasetids}}
  CALL (o) {
    MATCH (ds:Dataset)-[a:AGGREGATES]->(m)
    WHERE ds.datasetid IN coalesce($datasetids, []) AND NOT coalesce(a.hidden, false)
    WITH DISTINCT m.documentid AS documentid
    MATCH (d:Document {documentid: documentid})
    WHERE $ontologyid IS NULL OR (o IS NOT NULL AND EXISTS { (d)-[:IN_ONTOLOGY]->(o) })
    RETURN count(d) AS in_datasets
  }
  CALL () {
    UNWIND coalesce($datasetids, []) AS datasetid
    MATCH (ds:Dataset {datasetid: datasetid})
    RETURN count(DISTINCT datasetid) AS datasets_found
  }
{{/datasetids}}
  RETURN {documents: COUNT { (:Document) }, chapters: COUNT { (:Chapter) },
          paragraphs: COUNT { (:Paragraph) }, summaries: COUNT { (:Summary) },
          questions: COUNT { (:Question) }, keywords: COUNT { (:Keyword) },
{{#datasetids}}
          datasets_found: datasets_found,
{{/datasetids}}
          scope: CASE
{{#datasetids}}
                      WHEN $datasetids IS NOT NULL THEN in_datasets
{{/datasetids}}
                      WHEN $ontologyid IS NULL THEN COUNT { (:Document) }
                      WHEN o IS NULL THEN 0 ELSE COUNT { (o)<-[:IN_ONTOLOGY]-() } END} AS sizes
}
CALL (sizes) {
  WITH CASE WHEN sizes.scope < sizes.documents THEN $ontologyid END AS ontologyid,
       CASE WHEN sizes.scope < sizes.documents THEN $datasetids END AS datasetids
  UNWIND range(0, size($patterns) - 1) AS i
  WITH i, $patterns[i] AS p, ontologyid, datasetids, sizes,
       sizes.documents = COUNT { ()-[:IN_ONTOLOGY]->() } AS owned
  CALL (p) {
    OPTIONAL MATCH (c:Category)
    WHERE p.filter IS NULL AND c.name = p.name AND c.value IN coalesce(p.values, [])
    RETURN sum(CASE WHEN c IS NULL THEN 0 ELSE COUNT { (c)<-[:HAS_CATEGORY]-() } END) AS degree
  }
  WITH i, p, ontologyid, datasetids, sizes.documents AS documents,
       CASE WHEN p.filter IS NOT NULL OR ontologyid IS NULL OR datasetids IS NOT NULL
              THEN 'walk'
            WHEN sizes.scope <= degree THEN 'inside'
            WHEN owned AND size(p.values) = 1 AND sizes.documents - sizes.scope < degree
              THEN 'outside'
            ELSE 'walk' END AS way
  CALL (p, ontologyid, datasetids, way, documents) {
    MATCH (c:Category)
    WHERE p.filter IS NULL AND ontologyid IS NULL AND datasetids IS NULL
      AND coalesce(size(p.values), 0) = 1 AND c.name = p.name AND c.value = p.values[0]
    RETURN COUNT { (c)<-[:HAS_CATEGORY]-() } AS n
    UNION ALL
    UNWIND CASE WHEN way = 'inside' THEN [true] ELSE [] END AS guard
    MATCH (:Ontology {ontologyid: ontologyid})<-[:IN_ONTOLOGY]-(d:Document)
    WHERE EXISTS { MATCH (d)-[:HAS_CATEGORY]->(c:Category)
                   WHERE c.name = p.name AND c.value IN p.values }
    RETURN count(d) AS n
    UNION ALL
    UNWIND CASE WHEN way = 'outside' THEN [true] ELSE [] END AS guard
    MATCH (c:Category {name: p.name, value: p.values[0]})
    CALL (c, ontologyid) {
      MATCH (other:Ontology)
      WHERE other.ontologyid <> ontologyid
      MATCH (other)<-[:IN_ONTOLOGY]-(d:Document)
      WHERE EXISTS { (d)-[:HAS_CATEGORY]->(c) }
      RETURN count(d) AS elsewhere
    }
    RETURN COUNT { (c)<-[:HAS_CATEGORY]-() } - elsewhere AS n
    UNION ALL
    MATCH (c:Category)
    WHERE p.filter IS NULL AND way = 'walk'
      AND NOT (ontologyid IS NULL AND datasetids IS NULL AND coalesce(size(p.values), 0) = 1)
      AND c.name = p.name AND c.value IN coalesce(p.values, [])
    MATCH (d:Document)-[:HAS_CATEGORY]->(c)
    WHERE (ontologyid IS NULL OR EXISTS { (d)-[:IN_ONTOLOGY]->(:Ontology {ontologyid: ontologyid}) })
{{#datasetids}}
      AND (datasetids IS NULL OR EXISTS {
            MATCH (d)<-[a:AGGREGATES]-(ds:Dataset)
            WHERE ds.datasetid IN datasetids AND NOT coalesce(a.hidden, false) }
          OR EXISTS {
            MATCH (:Fragment {documentid: d.documentid})<-[a:AGGREGATES]-(ds:Dataset)
            WHERE ds.datasetid IN datasetids AND NOT coalesce(a.hidden, false) })
{{/datasetids}}
    RETURN count(DISTINCT d) AS n
    UNION ALL
    UNWIND CASE WHEN p.filter IS NOT NULL AND datasetids IS NULL
                THEN coalesce(p.seeds, []) ELSE [] END AS seed
    MATCH (c:Category {name: seed[0], value: seed[1]})
    RETURN COUNT { (c)<-[:HAS_CATEGORY]-() } AS n
    UNION ALL
    UNWIND CASE WHEN p.filter IS NOT NULL AND p.seeds IS NULL AND ontologyid IS NULL
                     AND datasetids IS NULL THEN p.filter ELSE [] END AS conj
    CALL (conj) {
      UNWIND conj AS lit
      UNWIND lit.values AS value
      OPTIONAL MATCH (c:Category {name: lit.name, value: value})
      WITH lit, value,
           sum(CASE WHEN c IS NULL THEN 0 ELSE COUNT { (c)<-[:HAS_CATEGORY]-() } END) AS degree
      WITH lit, sum(degree) AS having, max(degree) AS largest
      RETURN min(CASE WHEN lit.negated THEN null ELSE having END) AS positive,
             max(CASE WHEN lit.negated THEN largest ELSE 0 END) AS excluded
    }
    RETURN sum(CASE WHEN positive IS NULL OR positive > documents - excluded
                    THEN documents - excluded ELSE positive END) AS n
    UNION ALL
    CALL (p, ontologyid, datasetids) {
      UNWIND CASE WHEN datasetids IS NULL THEN []
                  ELSE coalesce(p.seeds, []) END AS seed
      MATCH (c:Category {name: seed[0], value: seed[1]})
      MATCH (d:Document)-[:HAS_CATEGORY]->(c)
      WHERE p.filter IS NOT NULL
      RETURN d
      UNION
      UNWIND CASE WHEN p.filter IS NOT NULL AND p.seeds IS NULL
                       AND (ontologyid IS NOT NULL OR datasetids IS NOT NULL)
                  THEN [true] ELSE [] END AS guard
      MATCH (d:Document)
      RETURN d
    }
    WITH p, d, ontologyid, datasetids
    WHERE (ontologyid IS NULL OR EXISTS { (d)-[:IN_ONTOLOGY]->(:Ontology {ontologyid: ontologyid}) })
{{#datasetids}}
      AND (datasetids IS NULL OR EXISTS {
            MATCH (d)<-[a:AGGREGATES]-(ds:Dataset)
            WHERE ds.datasetid IN datasetids AND NOT coalesce(a.hidden, false) }
          OR EXISTS {
            MATCH (:Fragment {documentid: d.documentid})<-[a:AGGREGATES]-(ds:Dataset)
            WHERE ds.datasetid IN datasetids AND NOT coalesce(a.hidden, false) })
{{/datasetids}}
    WITH p, d, COLLECT { MATCH (d)-[:HAS_CATEGORY]->(c:Category)
                         RETURN c.name + '\u001f' + c.value } AS keys
    WHERE any(conj IN coalesce(p.filter, []) WHERE all(lit IN conj WHERE
            any(key IN lit.keys WHERE key IN keys) <> lit.negated))
    RETURN count(d) AS n
  }
  WITH i, sum(n) AS n
  ORDER BY i
  RETURN collect(n) AS counts
}
RETURN names, pairs, ontologies, sizes, counts, known_names, known_pairs, known_ontologies,
       COLLECT { MATCH (definition:CategoryDefinition)
                 WHERE definition.name IN $exact_names
                 WITH definition ORDER BY definition.name
                 RETURN [definition.name, definition.pattern] } AS defined, pair_counts
