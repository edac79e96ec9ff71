"""How many SIMD lanes Cappuccino's vector code keeps busy (the trace's ``simd_waste``).

An output pixel is one thread (output-level parallelism); inside it the dot
product is vectorised ``lanes`` wide (float4 in RenderScript). In **map-major**
order a vector load picks the same (row, column) from ``lanes`` consecutive
feature maps, so only a channel count that is not a multiple of ``lanes``
wastes lanes (the 3-channel image). In the usual planar order a vector runs
along a kernel row, which wastes lanes at every row end: a 3x3 kernel keeps
3 of 4 busy, a 1x1 kernel 1 of 4, an 11x11 kernel 11 of 12. Fully connected
layers vectorise along their inputs either way.
"""

from __future__ import annotations

import math

WINDOW_OPS = ("conv", "dwconv", "deconv")
VECTOR_OPS = (*WINDOW_OPS, "fc", "matmul")


def _waste(n: int, lanes: int) -> float:
    """Fraction of lanes idle when ``n`` values are processed ``lanes`` at a time."""
    if n <= 0:
        return 0.0
    return 1.0 - n / (lanes * math.ceil(n / lanes))


def simd_waste(record: dict, map_major: bool, lanes: int = 4) -> float:
    """Idle-lane fraction of a kernel's vector code.

    Args:
        record: a trace row (uses ``op``, ``kernel``, ``in_channels``, ``groups``).
        map_major: whether feature maps are stored map-major.
        lanes: vector width in elements.
    """
    op = record["op"]
    if op not in VECTOR_OPS:
        return 0.0
    kernel = int(record.get("kernel") or 1)
    channels = int(record.get("in_channels") or 0)
    groups = max(1, int(record.get("groups") or 1))
    if op == "dwconv":
        # one channel per output: map-major vectors span outputs of adjacent maps
        return _waste(channels, lanes) if map_major else _waste(kernel, lanes)
    if op in ("fc", "matmul"):
        return _waste(channels, lanes)
    per_group = channels // groups if channels else 0
    return _waste(per_group, lanes) if map_major else _waste(kernel, lanes)
