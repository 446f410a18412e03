// Next free number n for "{session}#{kind}_{n}".
OPTIONAL MATCH (ds:Dataset {session: $session, kind: $kind})
RETURN coalesce(max(ds.number), 0) + 1 AS number
