// Which of the per-language full-text indexes ($names, migration V0009) are ONLINE: a
// language's text is searched with its analyzer only when both of its indexes are.
SHOW FULLTEXT INDEXES YIELD name, state
WHERE name IN $names AND state = 'ONLINE'
RETURN name
