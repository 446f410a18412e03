// One phrase's unfiltered searches in one round trip, one row per search with its hits as
// parallel lists (a few rows decode far faster in the driver than hundreds).
// The first row ('size') gives the node counts of every searchable kind (count store, cheap):
// names in fragmentids, counts in scores, so the caller learns them without a call of its own.
// Each entry of $vector_searches ({source, index, k, top_n}) asks its vector index for k
// candidates and keeps the first top_n (the procedure yields best first: no sort); with $rescore (a quantized index, whose
// scores drift) they are rescored with exact cosine on the index scale (1 + cos) / 2 as in
// search_vector; unquantized, the index score is that already. Each entry of $text_searches
// ({source, index, query, k}) runs one full-text index ($query: an escaped Lucene string built
// from user text). A search whose source holds no nodes is not run (no row). Every hit also
// carries its document's stored language (one unique-index lookup each), which the
// language-slots fusion needs, so it costs no round trip of its own ('' for none: collect
// skips nulls, and the lists must stay parallel). With $details (the caller returns documents)
// each row also lists [documentid, properties, ontologyid, categories] of its hits' documents,
// as document_details reads them, so the documents need no round trip of their own (a list of
// its own: collect skips the nulls of $details false, and it need not stay parallel).
// $ontologyid (or null): the scope's ontology, whose size is not known yet. The size row also
// counts its documents ('ontology'); when it holds only part of the documents no search runs
// (the caller searches again with the ontology as a pattern), else the searches are the
// unscoped ones: an ontology holding every document restricts nothing. Only documents are
// IN_ONTOLOGY, so the count is the bound ontology node's degree (no label check, no expand).
{{> search_phrase_unrestricted}}
