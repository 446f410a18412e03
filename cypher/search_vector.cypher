// Nearest fragments from one vector index. The index is asked for $k candidates (over-fetch:
// HNSW misses true neighbours, and a filter drops candidates), the best $top_n by index score
// are kept, and those are rescored with exact cosine on the index scale (1 + cos) / 2, so a
// quantized index's drifting scores never differ from the exact path (search_vector_exact).
// The restrictions ($documentids, $ontologyid, $datasetids, $name / $values / $negated,
// $filter; each null for none) are the part _search_restriction, checked as patterns on each
// candidate; $details adds the document's details (part _search_details).
CALL db.index.vector.queryNodes($index, $k, $vector) YIELD node, score
{{> search_restriction}}
{{> search_vector_top}}
{{> search_details}}
