// Documents marked TextLanguagePending (ingested before migration V0009), $limit of them:
// each with its stated language, its title and the texts of its chapters and keywords, each
// cut at $characters (what the language detector reads), so thalabus_graph/text_languages.py
// can choose the language its text is indexed in.
MATCH (d:TextLanguagePending)
WITH d LIMIT $limit
RETURN d.documentid AS documentid, d.language AS language, d.title AS title,
       COLLECT { MATCH (f)-[:IN_DOCUMENT]->(d) WHERE f:Chapter OR f:Keyword
                 RETURN left(f.text, $characters) ORDER BY f.fragmentid } AS texts
