"""How many examples a property test against the server draws.

``make test`` draws the number each test names. ``make test-lts`` sets
``THALABUS_TEST_EXAMPLES`` to a share of it: the property (the compiled plan answers as the
reference evaluation does) is the engine's, not the server's, and the line is checked by the
statements the examples run; a smaller draw runs fewer of the shapes the strategies build (the
``@example`` cases always run). The full draw has run on the default line.
"""

from __future__ import annotations

import os

SHARE_ENV = "THALABUS_TEST_EXAMPLES"


def examples(count: int) -> int:
    """``count``, or ``count`` times the share ``$THALABUS_TEST_EXAMPLES`` gives (at least 1).

    Raises:
        ValueError: the variable is not a number in (0, 1].
    """
    raw = os.environ.get(SHARE_ENV, "").strip()
    if not raw:
        return count
    share = float(raw)
    if not 0 < share <= 1:
        raise ValueError(f"{SHARE_ENV} must be a share in (0, 1], not {raw!r}")
    return max(1, round(count * share))
