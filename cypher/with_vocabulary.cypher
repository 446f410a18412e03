// A query's first statement carrying its vocabulary read
// (search.planned_vocabulary.PlannedVocabulary): the line {{= vocabulary}} is
// category_vocabulary as the query calls it, its parameters renamed
// $vocabulary_<name>; {{= statement}} is the search (any named read, its own parameters).
// The search runs only when the node counts, the scope's size, the pattern counts, the
// graph-defined categories and the pairs' counts the read returns are those the query planned
// with ($vocabulary_planned_sizes, $vocabulary_planned_counts, $vocabulary_planned_defined,
// $vocabulary_planned_pair_counts): they decide each search's path and pool, and the order
// and emptiness of its filter's literals. Always at least
// one row, carrying the vocabulary read; the search's columns are null on it when the search
// did not run (thalabus_planned false) or returned nothing (thalabus_ran null). RETURN *
// gives the search's columns under their own names (the subquery renames its import: on
// Neo4j 5.26 a subquery's RETURN * would return the imported variable again, an error).
CALL () {
{{= vocabulary}}
}
WITH {names: names, pairs: pairs, ontologies: ontologies, sizes: sizes, counts: counts,
       known_names: known_names, known_pairs: known_pairs, defined: defined,
       pair_counts: pair_counts}
       AS thalabus_vocabulary
WITH thalabus_vocabulary,
     thalabus_vocabulary.sizes = $vocabulary_planned_sizes
       AND thalabus_vocabulary.counts = $vocabulary_planned_counts
       AND thalabus_vocabulary.defined = $vocabulary_planned_defined
       AND thalabus_vocabulary.pair_counts = $vocabulary_planned_pair_counts
       AS thalabus_planned
OPTIONAL CALL (thalabus_planned) {
  WITH thalabus_planned AS thalabus_ran WHERE thalabus_ran
  CALL () {
{{= statement}}
  }
  RETURN *
}
RETURN *
