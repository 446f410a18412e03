"""An application's permission graph beside the sample corpus: users who may read documents
(``(:User {name})-[:CAN_READ]->(:Document)``) and the category ``READABLE_BY`` defined over
it, as the application-graph tests build it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from thalabus_graph import ThalabusGraph

READABLE_BY = "(document)<-[:CAN_READ]-(:User {name: $value})"


def grant(graph: ThalabusGraph, readers: Mapping[str, Sequence[str]]) -> None:
    """Give each user of ``readers`` (name -> document ids) the right to read those documents,
    and define ``READABLE_BY`` over the grants."""
    graph.db.write_tx(lambda tx: tx.run(
        "UNWIND $pairs AS pair MERGE (u:User {name: pair[0]}) WITH u, pair "
        "MATCH (d:Document {documentid: pair[1]}) MERGE (u)-[:CAN_READ]->(d)",
        pairs=[[u, d] for u, docs in readers.items() for d in docs]).consume())
    graph.define_category("READABLE_BY", READABLE_BY)
