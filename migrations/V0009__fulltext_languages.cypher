// V0009: full-text indexes per language, each with the analyzer Neo4j ships for it (stemming
// and stop words of that language), over the fragments carrying the language's labels
// (`<Name>Chapter`, `<Name>Keyword`) that ingest writes from the document's language (stated,
// or detected when the document states none). The table of languages is
// thalabus_graph/languages.py `LANGUAGES`. The language-neutral indexes of V0003 stay: they
// hold every fragment, serve text in languages without an analyzer, TEXT terms, and every
// search until the graph's fragments are labelled.
// The documents ingested before this migration are marked `TextLanguagePending`: their
// fragments carry no language label yet, so the engine keeps searching the neutral indexes
// until `thalabus-graph migrate` (ThalabusGraph.migrate) has labelled them and removed the
// mark (thalabus_graph/text_languages.py `backfill`; fragment ids and datasets stay). A fresh
// database has no documents: the mark is a no-op. Not eventually consistent, as V0003.
// Released migrations are never edited: add a new V<n>__<what>.cypher instead.

CREATE FULLTEXT INDEX chapters_fulltext_arabic IF NOT EXISTS
FOR (c:ArabicChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'arabic', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_arabic IF NOT EXISTS
FOR (k:ArabicKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'arabic', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_armenian IF NOT EXISTS
FOR (c:ArmenianChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'armenian', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_armenian IF NOT EXISTS
FOR (k:ArmenianKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'armenian', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_basque IF NOT EXISTS
FOR (c:BasqueChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'basque', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_basque IF NOT EXISTS
FOR (k:BasqueKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'basque', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_bulgarian IF NOT EXISTS
FOR (c:BulgarianChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'bulgarian', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_bulgarian IF NOT EXISTS
FOR (k:BulgarianKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'bulgarian', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_catalan IF NOT EXISTS
FOR (c:CatalanChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'catalan', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_catalan IF NOT EXISTS
FOR (k:CatalanKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'catalan', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_czech IF NOT EXISTS
FOR (c:CzechChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'czech', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_czech IF NOT EXISTS
FOR (k:CzechKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'czech', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_danish IF NOT EXISTS
FOR (c:DanishChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'danish', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_danish IF NOT EXISTS
FOR (k:DanishKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'danish', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_dutch IF NOT EXISTS
FOR (c:DutchChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'dutch', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_dutch IF NOT EXISTS
FOR (k:DutchKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'dutch', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_english IF NOT EXISTS
FOR (c:EnglishChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_english IF NOT EXISTS
FOR (k:EnglishKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_finnish IF NOT EXISTS
FOR (c:FinnishChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'finnish', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_finnish IF NOT EXISTS
FOR (k:FinnishKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'finnish', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_french IF NOT EXISTS
FOR (c:FrenchChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'french', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_french IF NOT EXISTS
FOR (k:FrenchKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'french', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_galician IF NOT EXISTS
FOR (c:GalicianChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'galician', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_galician IF NOT EXISTS
FOR (k:GalicianKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'galician', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_german IF NOT EXISTS
FOR (c:GermanChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'german', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_german IF NOT EXISTS
FOR (k:GermanKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'german', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_greek IF NOT EXISTS
FOR (c:GreekChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'greek', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_greek IF NOT EXISTS
FOR (k:GreekKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'greek', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_hindi IF NOT EXISTS
FOR (c:HindiChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'hindi', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_hindi IF NOT EXISTS
FOR (k:HindiKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'hindi', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_hungarian IF NOT EXISTS
FOR (c:HungarianChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'hungarian', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_hungarian IF NOT EXISTS
FOR (k:HungarianKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'hungarian', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_indonesian IF NOT EXISTS
FOR (c:IndonesianChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'indonesian', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_indonesian IF NOT EXISTS
FOR (k:IndonesianKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'indonesian', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_irish IF NOT EXISTS
FOR (c:IrishChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'irish', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_irish IF NOT EXISTS
FOR (k:IrishKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'irish', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_italian IF NOT EXISTS
FOR (c:ItalianChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'italian', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_italian IF NOT EXISTS
FOR (k:ItalianKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'italian', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_latvian IF NOT EXISTS
FOR (c:LatvianChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'latvian', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_latvian IF NOT EXISTS
FOR (k:LatvianKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'latvian', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_lithuanian IF NOT EXISTS
FOR (c:LithuanianChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'lithuanian', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_lithuanian IF NOT EXISTS
FOR (k:LithuanianKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'lithuanian', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_norwegian IF NOT EXISTS
FOR (c:NorwegianChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'norwegian', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_norwegian IF NOT EXISTS
FOR (k:NorwegianKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'norwegian', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_persian IF NOT EXISTS
FOR (c:PersianChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'persian', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_persian IF NOT EXISTS
FOR (k:PersianKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'persian', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_portuguese IF NOT EXISTS
FOR (c:PortugueseChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'portuguese', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_portuguese IF NOT EXISTS
FOR (k:PortugueseKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'portuguese', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_romanian IF NOT EXISTS
FOR (c:RomanianChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'romanian', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_romanian IF NOT EXISTS
FOR (k:RomanianKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'romanian', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_russian IF NOT EXISTS
FOR (c:RussianChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'russian', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_russian IF NOT EXISTS
FOR (k:RussianKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'russian', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_spanish IF NOT EXISTS
FOR (c:SpanishChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'spanish', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_spanish IF NOT EXISTS
FOR (k:SpanishKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'spanish', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_swedish IF NOT EXISTS
FOR (c:SwedishChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'swedish', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_swedish IF NOT EXISTS
FOR (k:SwedishKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'swedish', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX chapters_fulltext_turkish IF NOT EXISTS
FOR (c:TurkishChapter) ON EACH [c.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'turkish', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX keywords_fulltext_turkish IF NOT EXISTS
FOR (k:TurkishKeyword) ON EACH [k.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'turkish', `fulltext.eventually_consistent`: false}};

MATCH (d:Document)
CALL (d) {
  SET d:TextLanguagePending
} IN TRANSACTIONS OF 10000 ROWS
