// Whether a goal exists (a goal may exist and use nothing yet).
OPTIONAL MATCH (g:Goal {goalid: $goalid})
RETURN g IS NOT NULL AS found
