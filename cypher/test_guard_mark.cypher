// Test-suite guard: mark a database the suite found empty as its own (idempotent).
MERGE (m:__ThalabusTestMarker)
ON CREATE SET m.created_at = datetime(), m.note = $note
RETURN count(m) AS markers
