"""`CrossEncoderReranker`: any in-process ``score(pairs)`` model, run off the event loop.

A sentence-transformers ``CrossEncoder`` (``predict`` wrapped as ``score``) or an in-house model
drops in; scores that do not line up with the pairs are a `ConfigurationError`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from thalabus_graph.errors import ConfigurationError
from thalabus_graph.rerank.protocol import Passage, RerankReply, clip, is_score


@runtime_checkable
class CrossEncoder(Protocol):
    """One method: a relevance score per (query, passage) pair, in pair order."""

    def score(self, pairs: Sequence[tuple[str, str]]) -> Sequence[float]:
        """Scores for ``pairs``, one per pair, in the same order."""
        ...


class CrossEncoderReranker:
    """Reranks with an in-process cross-encoder in a worker thread.

    Passages are cut at ``max_chars`` and sent ``batch_size`` pairs per model call (None = all
    at once). A non-finite score leaves that passage unscored.

    Example:
        >>> import asyncio
        >>> class Overlap:
        ...     def score(self, pairs):
        ...         return [len(set(q.split()) & set(t.split())) for q, t in pairs]
        >>> reranker = CrossEncoderReranker(Overlap())
        >>> reply = asyncio.run(reranker.score("bob cat", [Passage("d-1", "bob the cat")]))
        >>> dict(reply.scores)
        {'d-1': 2.0}

    Raises:
        ConfigurationError: (from ``score``) the model returned a different number of scores
            than pairs, so no score can be attributed.
    """

    def __init__(
        self,
        model: CrossEncoder,
        *,
        batch_size: int | None = None,
        max_chars: int = 24000,
        available: bool = True,
    ) -> None:
        if batch_size is not None and batch_size < 1:
            raise ConfigurationError("batch_size must be at least 1")
        self.model = model
        self.batch_size = batch_size
        self.max_chars = max_chars
        self._available = available

    @property
    def available(self) -> bool:
        """Whether this backend is declared usable (``available=`` at construction)."""
        return self._available

    async def score(self, query: str, passages: Sequence[Passage]) -> RerankReply:
        """Score ``passages`` against ``query`` in a worker thread."""
        if not passages:
            return RerankReply()
        pairs = [(query, clip(p.text, self.max_chars)) for p in passages]
        size = self.batch_size or len(pairs)
        scores: dict[str, float] = {}
        for start in range(0, len(pairs), size):
            chunk = pairs[start : start + size]
            values = list(await asyncio.to_thread(self.model.score, chunk))
            if len(values) != len(chunk):
                raise ConfigurationError(
                    f"cross-encoder returned {len(values)} scores for {len(chunk)} pairs"
                )
            for passage, value in zip(passages[start : start + size], values, strict=True):
                if is_score(value):
                    scores[passage.fragmentid] = float(value)
        return RerankReply(scores=scores, usage={"model_calls": -(-len(pairs) // size)})
