"""Model switching traffic: what a descendant change pages in and out.

Descendants of a multi-capacity model are nested: switching from descendant
``a`` to a larger ``b`` (upgrade) pages in only the filters ``b`` has beyond
``a`` and pages out nothing; a downgrade pages out only the filters the smaller
model lacks and pages in nothing. Independent models (one per capacity) page
the whole new model in and the whole old model out.

Sizes are in bytes. :func:`average_traffic` gives the paper's "average
switching traffic" (every ordered pair of distinct descendants, upgrades and
downgrades separately); the storage model of the SoC turns page-in bytes into
time and energy (:mod:`simulator.engine.storage`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

MULTI_CAPACITY, INDEPENDENT = "multi-capacity", "independent"
SCHEMES = (MULTI_CAPACITY, INDEPENDENT)


@dataclass(frozen=True)
class Traffic:
    """Bytes moved by one switch.

    Attributes:
        page_in: bytes read from storage into memory.
        page_out: bytes released from memory.
    """

    page_in: float
    page_out: float


def switch_traffic(sizes: Sequence[float], src: int, dst: int,
                   scheme: str = MULTI_CAPACITY) -> Traffic:
    """Traffic of switching from descendant ``src`` to ``dst``.

    Args:
        sizes: memory of each descendant (bytes), smallest first.
        src: index of the descendant in memory (-1: none, a cold start).
        dst: index of the descendant to run.
        scheme: ``multi-capacity`` (nested descendants) or ``independent``.
    """
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {', '.join(SCHEMES)}; got {scheme!r}")
    old = sizes[src] if src >= 0 else 0.0
    new = sizes[dst]
    if src == dst:
        return Traffic(0.0, 0.0)
    if scheme == INDEPENDENT:
        return Traffic(new, old)
    return Traffic(max(0.0, new - old), max(0.0, old - new))


def average_traffic(sizes: Sequence[float], scheme: str = MULTI_CAPACITY,
                    upgrade: bool = True) -> Traffic:
    """Mean traffic over all upgrades (or all downgrades) between descendants."""
    pairs = [(a, b) for a in range(len(sizes)) for b in range(len(sizes))
             if (a < b if upgrade else a > b)]
    if not pairs:
        return Traffic(0.0, 0.0)
    moves = [switch_traffic(sizes, a, b, scheme) for a, b in pairs]
    return Traffic(sum(m.page_in for m in moves) / len(moves),
                   sum(m.page_out for m in moves) / len(moves))
