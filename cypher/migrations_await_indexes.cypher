// Block until every index is ONLINE (fails if one is FAILED or $timeout seconds pass).
CALL db.awaitIndexes($timeout)
