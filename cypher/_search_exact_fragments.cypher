// Part: the fragments `node` of label `label` (a variable: the including statement binds it,
// from $label or from each of several searches) of the documents `d`
// (_search_exact_documents): a paragraph is reached through its chapter.
CALL (d, label) {
  UNWIND CASE WHEN label = 'Paragraph' THEN [] ELSE [true] END AS own
  MATCH (d)<-[:IN_DOCUMENT]-(node)
  WHERE label IN labels(node)
  RETURN node
  UNION ALL
  UNWIND CASE WHEN label = 'Paragraph' THEN [true] ELSE [] END AS through_chapter
  MATCH (d)<-[:IN_DOCUMENT]-(:Chapter)<-[:IN_CHAPTER]-(node:Paragraph)
  RETURN node
}
