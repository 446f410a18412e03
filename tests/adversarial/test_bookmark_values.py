"""Values handed over as bookmarks that are neither a bookmark string nor a list of them
(``graph.database.checked_bookmarks``): each is a ``ConfigurationError`` that says what to
pass, before any driver or server sees it, and an endless iterable is read only as far as the
bookmark limit."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from thalabus_graph.errors import ConfigurationError
from thalabus_graph.graph.database import MAX_BOOKMARKS, checked_bookmarks


@pytest.mark.parametrize("value", [5, 2.5, b"FB:abc", bytearray(b"FB:abc"), None, object()])
def test_a_value_that_is_no_list_of_bookmarks_says_what_to_pass(value: object) -> None:
    with pytest.raises(ConfigurationError, match="a string a result carried"):
        checked_bookmarks(value)  # type: ignore[arg-type]


def test_an_endless_iterable_is_read_only_past_the_limit() -> None:
    drawn = 0

    def endless() -> Iterator[str]:
        nonlocal drawn
        for _ in itertools.count():
            drawn += 1
            yield ""

    with pytest.raises(ConfigurationError, match=f"more than {MAX_BOOKMARKS} bookmarks"):
        checked_bookmarks(endless())
    assert drawn == MAX_BOOKMARKS + 1
