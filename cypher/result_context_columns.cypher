// The columns of a query's graph context (results.context.GraphContext.compile), learned
// from this statement's EXPLAIN and never run: {{= context}} is the user's read-only query
// part, in a subquery that sees `document` and `fragment` as the context does when it runs
// (result_context). RETURN * lists the subquery's columns beside `document` and `fragment`;
// the two matches leave no other variable in scope, so a column only clashes with the names
// the context sees.
OPTIONAL MATCH (document:Document)
OPTIONAL MATCH (fragment:Fragment)
CALL (document, fragment) {
{{= context}}
}
RETURN *
