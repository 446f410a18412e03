// Test-suite guard: how many nodes the database holds, and how many are the suite's marker.
MATCH (n)
RETURN count(n) AS nodes, count(CASE WHEN n:__ThalabusTestMarker THEN 1 END) AS markers
