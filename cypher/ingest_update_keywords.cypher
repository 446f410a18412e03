// Update keywords that already exist, in place (no embedding: searched as text only).
UNWIND $rows AS r
MATCH (k:Keyword {fragmentid: r.fragmentid})
SET k.ordinal = r.ordinal, k.text = r.text
