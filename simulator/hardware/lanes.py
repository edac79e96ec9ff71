"""How full fixed-width lanes are when work comes in whole steps.

Hardware that processes ``lanes`` items per step (a SIMD vector, a MAC array's
channel or pixel dimension, a block of padded channels) takes
``ceil(size / lanes)`` whole steps for ``size`` items; the padded lanes of the
last step compute nothing. The busy fraction is

    size / (lanes * ceil(size / lanes))

(dimensionless). Used by the core's MAC array (:mod:`.mac_array`) and by
policies that model a program's vector code; one function, so that every site
computes it with the same float operations.
"""

from __future__ import annotations

import math


def lane_fill(size: int, lanes: int) -> float:
    """Fraction of ``lanes`` busy over the ``ceil(size / lanes)`` steps that
    ``size`` items take (1 when ``size`` is unknown, 0, or one lane does all;
    the idle fraction is ``1 - lane_fill``)."""
    if size <= 0 or lanes <= 1:
        return 1.0
    return size / (lanes * math.ceil(size / lanes))
