// Block until every index is online (seconds).
CALL db.awaitIndexes($timeout)
