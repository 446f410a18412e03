// The graph context of a query's results (results.context.GraphContext.rows): for each
// target ($targets: maps of index, documentid and fragmentid, the fragment id null for a
// document result), the rows of {{= context}}, the user's read-only query part, at most
// $cap of them. The inner subquery sees exactly `document` and `fragment` (null when the
// result is a document or its fragment is gone); the outer one caps the rows per target and
// hands them on as one list per row in the order of {{= columns}} (the context's columns,
// quoted), so no column of the context meets a variable of this statement. A target whose
// document is missing, or whose context returns nothing, has no row here.
UNWIND $targets AS target
MATCH (document:Document {documentid: target.documentid})
OPTIONAL MATCH (fragment:Fragment {fragmentid: target.fragmentid})
CALL (document, fragment) {
  CALL (document, fragment) {
{{= context}}
  }
  RETURN [
{{= columns}}
  ] AS row
  LIMIT $cap
}
RETURN target.index AS index, row
