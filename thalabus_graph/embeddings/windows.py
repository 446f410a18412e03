"""Long texts embedded in a bounded number of windows.

An embedding model reads a window of tokens (e5-small: 512); what lies beyond is cut by the
model, or costs time quadratic in the length where it is not. A text longer than
``window_chars`` characters is therefore split into windows of at most ``window_chars``
characters, each ending at whitespace where there is some in its second half, and only the
first ``max_windows`` windows are embedded: a 10 MB chapter costs ``max_windows`` model calls,
not thousands. The windows' unit vectors are averaged and the mean normalised again (the mean
direction of its parts; a text that fits one window is embedded as it is).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from thalabus_graph.embeddings.base import Embedder, Vectors, empty_vectors, normalize_rows


def windows(text: str, window_chars: int, max_windows: int) -> list[str]:
    """The first ``max_windows`` windows of ``text`` (the text itself when it fits one).

    Example:
        >>> windows("aaa bbb ccc ddd", 8, 2)
        ['aaa bbb', 'ccc ddd']
    """
    if len(text) <= window_chars:
        return [text]
    out: list[str] = []
    start = 0
    while start < len(text) and len(out) < max_windows:
        end = min(start + window_chars, len(text))
        if end < len(text):
            cut = text.rfind(" ", start + window_chars // 2, end + 1)
            cut = max(cut, text.rfind("\n", start + window_chars // 2, end + 1))
            end = cut if cut > start else end
        piece = text[start:end].strip()
        if piece:
            out.append(piece)
        start = end
    return out or [text[:window_chars]]


class WindowedEmbedder:
    """Wraps an embedder so that no text costs more than ``max_windows`` windows.

    Example:
        >>> from thalabus_graph.embeddings import E5LocalEmbedder
        >>> WindowedEmbedder(E5LocalEmbedder(), 2000, 8).embed_passages(["x " * 9000]).shape
        (1, 384)
    """

    def __init__(self, inner: Embedder, window_chars: int, max_windows: int) -> None:
        self.inner = inner
        self.window_chars = window_chars
        self.max_windows = max_windows

    @property
    def dimensions(self) -> int:
        """The inner embedder's dimension."""
        return self.inner.dimensions

    @property
    def model_id(self) -> str:
        """The inner embedder's model id (a text that fits one window gets the same vector)."""
        return self.inner.model_id

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Queries in windows, as passages."""
        return self._embed(texts, self.inner.embed_queries)

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        """Passages in windows: one call for every window of every text."""
        return self._embed(texts, self.inner.embed_passages)

    def _embed(self, texts: Sequence[str], embed: Callable[[Sequence[str]], Vectors]
               ) -> Vectors:
        if not texts:
            return empty_vectors(self.dimensions)
        parts = [windows(t, self.window_chars, self.max_windows) for t in texts]
        if all(len(p) == 1 for p in parts):
            return embed([p[0] for p in parts])
        flat = [w for p in parts for w in p]
        vectors = normalize_rows(embed(flat))
        rows = []
        start = 0
        for p in parts:
            rows.append(vectors[start:start + len(p)].mean(axis=0))
            start += len(p)
        return normalize_rows(np.stack(rows))


__all__ = ["WindowedEmbedder", "windows"]
