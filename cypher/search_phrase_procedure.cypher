// One unrestricted phrase through the procedure plugin (thalabus.phraseResult): its vector and
// full-text searches, fusion and calibration run inside the server, by the same rules as the
// engine's search_phrase and the Python steps after it; one row of parallel lists comes back
// with the node counts, the stored vectors' models, the phrase's warning and whether its
// language could change its gate (the engine then reads it and, for a language the graph lacks,
// calls again with held false). $details: how many of the phrase's documents, best first (by
// their best fragment, as aggregate_documents ranks them), the row also lists as
// [documentid, properties, ontologyid, categories], as document_details reads them, read by the
// plugin in the same call (the query's limit; -1: every one; 0: none).
CALL thalabus.phraseResult($text, $vector, $options, $details)
YIELD fragmentids, documentids, sources, texts, scores, raw_scores, contributions, warning,
      sizes, models, rows, language_matters, details
RETURN fragmentids, documentids, sources, texts, scores, raw_scores, contributions, warning,
       sizes, models, rows, language_matters, details
