// Empty the benchmark's own database (marker kept); run only after the marker was checked.
MATCH (n) WHERE NOT n:ThalabusScaleBenchmark
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS
