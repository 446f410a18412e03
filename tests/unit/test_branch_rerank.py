"""Branch-level reranking: one reranker scale per branch, unscored fragments after the scored."""

from __future__ import annotations

from collections.abc import Sequence

from thalabus_graph.fragments import Fragment, sort_fragments, stub
from thalabus_graph.query import parse
from thalabus_graph.rerank import Passage, RerankReply
from thalabus_graph.rerank.branches import BranchRerank
from thalabus_graph.settings import Settings


class Table:
    """Scores from a fixed table; ids not in it stay unscored."""

    def __init__(self, table: dict[str, float]) -> None:
        self.table = table

    @property
    def available(self) -> bool:
        return True

    async def score(self, query: str, passages: Sequence[Passage]) -> RerankReply:
        return RerankReply({p.fragmentid: self.table[p.fragmentid] for p in passages
                            if p.fragmentid in self.table})


def test_an_unscored_fragment_ranks_after_every_scored_one_even_on_the_lowest_score() -> None:
    lowest = Fragment("z-1-c1", "z-1", "a cat", 0.9, "chapters")
    best = Fragment("m-1-c1", "m-1", "the cat", 0.2, "chapters")
    missing = Fragment("b-1-c1", "b-1", "no cat", 0.95, "chapters")
    category = stub("a-1")
    rerank = BranchRerank(Table({"z-1-c1": 0.3, "m-1-c1": 0.5}), Settings())
    out = sort_fragments(rerank(parse('"cat" OR CHARACTER=Bob'),
                                [lowest, best, missing, category]))
    assert [f.fragmentid for f in out] == ["m-1-c1", "z-1-c1", "a-1", "b-1-c1"]
    assert all(f.score < 0.3 for f in out[2:]) and out[1].score == 0.3
