// Update keywords that already exist, in place (no embedding: searched as text only); the
// language label (r.labels, one or none) replaces any of $language_labels.
UNWIND $rows AS r
MATCH (k:Keyword {fragmentid: r.fragmentid})
SET k.ordinal = r.ordinal, k.text = r.text
REMOVE k:$($language_labels)
SET k:$(r.labels)
