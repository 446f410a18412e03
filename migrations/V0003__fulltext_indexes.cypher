// V0003: full-text indexes for TEXT search on chapters and keywords.
// {{FULLTEXT_ANALYZER}} is filled from the validated setting fulltext_analyzer. The indexes are
// not eventually consistent: a committed write is searchable at once.

CREATE FULLTEXT INDEX chapters_fulltext IF NOT EXISTS
FOR (c:Chapter) ON EACH [c.text]
OPTIONS {indexConfig: {
  `fulltext.analyzer`: '{{FULLTEXT_ANALYZER}}',
  `fulltext.eventually_consistent`: false
}};

CREATE FULLTEXT INDEX keywords_fulltext IF NOT EXISTS
FOR (k:Keyword) ON EACH [k.text]
OPTIONS {indexConfig: {
  `fulltext.analyzer`: '{{FULLTEXT_ANALYZER}}',
  `fulltext.eventually_consistent`: false
}};
