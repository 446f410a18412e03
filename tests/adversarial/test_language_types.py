"""A query's stated language given as something other than text (a number, bytes, a list of
codes) is an unknown language, refused with ``UnknownLanguageError`` like ``"klingon"``,
not an ``AttributeError`` from treating it as a string."""

from __future__ import annotations

import pytest

from thalabus_graph.errors import ConfigurationError, UnknownLanguageError
from thalabus_graph.languages import checked_language


@pytest.mark.parametrize("stated", [5, 1.5, b"en", ["en"], ("de",), {"code": "en"}, True])
def test_a_language_that_is_not_text_is_refused(stated: object) -> None:
    with pytest.raises(UnknownLanguageError, match="as text") as caught:
        checked_language(stated)  # type: ignore[arg-type]
    assert isinstance(caught.value, ConfigurationError)


@pytest.mark.parametrize(("stated", "kept"), [(None, None), ("", None), ("  ", None),
                                              ("de", "de"), ("German", "German")])
def test_text_and_none_keep_their_meaning(stated: str | None, kept: str | None) -> None:
    assert checked_language(stated) == kept
