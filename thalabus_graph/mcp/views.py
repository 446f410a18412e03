"""What one agent may see: the required filter of its bearer token and the operator's named
graph contexts.

An operator serving several agents over HTTP gives each its own token and its own view: a
JSON file maps each bearer token to a required filter (``{"token-a": "READABLE_BY=alice",
"token-b": "READABLE_BY=bob", "token-admin": null}``). The server accepts exactly those tokens;
a tool call runs with its caller's filter (``VIEW``), on top of the server's own
``--required-filter``. The filter reaches every query and explain as ``required_filter`` and
keeps every dataset member and goal line outside it out of the answers (``Views.kept``).
Each token filter also has its own space of sessions and goals (``Views.space``): the
datasets and goals an agent writes are named inside it, and an agent reads or writes no
dataset or goal of another view, so no agent learns another's queries, sessions or sizes.
Graph contexts are Cypher the operator wrote (``--context NAME=FILE.cypher``); an agent
names one, never sends Cypher.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TypeVar

from thalabus_graph.datasets import DatasetInfo, Member
from thalabus_graph.engine import ThalabusGraph
from thalabus_graph.errors import ConfigurationError, DatasetInputError
from thalabus_graph.query.required import required_filter

VIEW: ContextVar[str | None] = ContextVar("thalabus_mcp_view", default=None)
"""The required filter of the calling token, for the duration of one tool call."""
M = TypeVar("M")


def token_filters(path: str) -> dict[str, str | None]:
    """The token -> required filter map of ``path`` (JSON object; null: no filter), each
    filter parsed once so a typo stops the server before it serves.

    Raises:
        ConfigurationError: unreadable, not an object of non-empty string tokens, or a
            filter that is not a filter of categories.
    """
    try:
        loaded = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigurationError(f"--token-filters {path}: {exc}") from exc
    if not isinstance(loaded, dict) or not loaded:
        raise ConfigurationError(f"--token-filters {path}: a JSON object mapping each bearer "
                                 "token to its required filter (or null)")
    out: dict[str, str | None] = {}
    for token, text in loaded.items():
        if not isinstance(token, str) or len(token) < 16:
            raise ConfigurationError(f"--token-filters {path}: every token is a string of at "
                                     "least 16 characters")
        if text is not None:
            if not isinstance(text, str):
                raise ConfigurationError(f"--token-filters {path}: a filter is a string or "
                                         "null")
            required_filter(text)
        out[token] = text
    return out


def named_contexts(pairs: Sequence[str]) -> dict[str, str]:
    """The operator's graph contexts from ``NAME=FILE.cypher`` arguments.

    Raises:
        ConfigurationError: a pair without ``=``, a name given twice, or an unreadable file.
    """
    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, path = pair.partition("=")
        if not sep or not name or not path:
            raise ConfigurationError(f"--context {pair!r}: write NAME=FILE.cypher")
        if name in out:
            raise ConfigurationError(f"--context {name}: given twice")
        try:
            out[name] = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigurationError(f"--context {name}: cannot read {path}: "
                                     f"{exc.strerror}") from exc
    return out


class Views:
    """The calling agent's view of the graph: its required filter and the documents it may
    see (read once per call, only when a filter holds)."""

    def __init__(self, graph: ThalabusGraph, contexts: Mapping[str, str] | None = None) -> None:
        self.graph = graph
        self.contexts = dict(contexts or {})

    @staticmethod
    def required() -> str | None:
        """The calling token's required filter (None: none beyond the server's)."""
        return VIEW.get()

    def context(self, name: str | None) -> str | None:
        """The Cypher of the operator's context ``name`` (None: none asked).

        Raises:
            ConfigurationError: no context has that name.
        """
        if name is None:
            return None
        if name not in self.contexts:
            known = ", ".join(sorted(self.contexts)) or "none (the server has no --context)"
            raise ConfigurationError(f"unknown context {name!r}; this server's contexts: "
                                     f"{known}")
        return self.contexts[name]

    def visible(self, required: str | None) -> frozenset[str] | None:
        """The documents the caller may see (None: every document): those of the server's
        and the caller's required filters."""
        if self.graph.required_filter is None and required is None:
            return None
        return frozenset(f.documentid for f in self.graph.stream("", required_filter=required))

    @staticmethod
    def space(required: str | None) -> str:
        """The prefix of the sessions and goals of the view ``required`` ('' without a token
        filter: the server's one view): ``view-`` and 12 hex of the filter's sha256, the same
        for every token holding that filter and across restarts."""
        if required is None:
            return ""
        return f"view-{hashlib.sha256(required.encode('utf-8')).hexdigest()[:12]}."

    def own(self, name: str, required: str | None, what: str) -> str:
        """``name`` (a dataset or goal id the caller gave) when it lies in the caller's
        space, else the error an unknown one gets: another view's ids do not exist for it.

        Raises:
            DatasetInputError: ``name`` is outside the caller's space.
        """
        space = self.space(required)
        if space and not name.startswith(space):
            raise DatasetInputError(f"no {what} {name!r} in this view (the ids this view "
                                    f"writes start with {space!r})")
        return name

    def owned(self, datasetids: Sequence[str] | None, required: str | None
              ) -> list[str] | None:
        """``datasetids`` (a query's parent datasets) when each lies in the caller's space
        (``own``)."""
        return None if datasetids is None else [self.own(d, required, "dataset")
                                                for d in datasetids]

    def page(self, info: DatasetInfo, include_hidden: bool, offset: int, limit: int,
             required: str | None) -> tuple[list[Member], int, int]:
        """A page of a dataset's members inside the caller's view, best first, with the
        members listed there (hidden ones only with ``include_hidden``) and its total (the
        dataset's, or the view's count under a filter: a view never learns the rest)."""
        visible = self.visible(required)
        members = self.graph.datasets.members(info.datasetid, include_hidden=include_hidden,
                                              limit=offset + limit if visible is None else None)
        if visible is None:
            listed = info.members - (0 if include_hidden else info.hidden)
            return members[offset:offset + limit], listed, info.members
        members = [m for m in members if m.documentid in visible]
        return members[offset:offset + limit], len(members), len(members)

    def kept(self, items: Iterable[M], required: str | None) -> list[M]:
        """``items`` (anything with a ``documentid``) inside the caller's view."""
        listed = list(items)
        visible = self.visible(required)
        if visible is None:
            return listed
        return [item for item in listed if _documentid(item) in visible]


def _documentid(item: Any) -> str:
    return str(item.documentid)
