// The scale benchmark's marker: present only in a database the benchmark created.
MATCH (m:ThalabusScaleBenchmark) RETURN properties(m) AS marker
