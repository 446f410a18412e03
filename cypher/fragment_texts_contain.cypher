// The fragments of $fragmentids whose whole text contains $term: the case-sensitive check of
// full-text hits whose text came back cut to the result bound (search/text.py).
UNWIND $fragmentids AS id
MATCH (f:Fragment {fragmentid: id})
WHERE f.text CONTAINS $term
RETURN f.fragmentid AS fragmentid
