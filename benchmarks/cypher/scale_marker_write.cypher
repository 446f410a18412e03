// Claim (or update) the benchmark's marker; $props describes the corpus it holds.
MERGE (m:ThalabusScaleBenchmark {key: 'marker'})
SET m += $props
