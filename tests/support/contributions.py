"""Comparing two fragments' contributions, whose notes carry scores printed to four decimals
(``calibrated:chapters 0.9180 -> 0.6626``): two evaluations whose scores agree to 1e-6 can
still print a score on either side of a rounding boundary, so the numbers in a note are
compared to one unit of the last printed digit and everything else exactly."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

NUMBER = re.compile(r"-?\d+\.\d+")
LAST_DIGIT = 1e-4
"""One unit of the last digit the notes print (``scale.PhraseScale``)."""


def same_contributions(a: Sequence[str], b: Sequence[str]) -> bool:
    """Whether two contribution tuples are the same, printed scores within ``LAST_DIGIT``."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if NUMBER.sub("#", x) != NUMBER.sub("#", y):
            return False
        numbers = zip(NUMBER.findall(x), NUMBER.findall(y), strict=True)
        if not all(math.isclose(float(p), float(q), abs_tol=LAST_DIGIT * 1.01)
                   for p, q in numbers):
            return False
    return True

