// Which of the ontology-filtered vector indexes ($names, migration V0007) are ONLINE: the
// in-index path (search_vector_in_index) is used only when all of them are.
SHOW VECTOR INDEXES YIELD name, state
WHERE name IN $names AND state = 'ONLINE'
RETURN name
