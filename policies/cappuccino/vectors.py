"""How many SIMD lanes Cappuccino's vector code keeps busy (the trace's ``simd_waste``).

An output pixel is one thread (output-level parallelism); inside it the dot
product is vectorised ``lanes`` wide (float4 in RenderScript). In **map-major**
order a vector load picks the same (row, column) from ``lanes`` consecutive
feature maps, so only a channel count that is not a multiple of ``lanes``
wastes lanes (the 3-channel image). In the usual planar order a vector runs
along a kernel row, which wastes lanes at every row end: a 3x3 kernel keeps
3 of 4 busy, a 1x1 kernel 1 of 4, an 11x11 kernel 11 of 12. Fully connected
layers vectorise along their inputs either way.

Layers built on a transcendental function do not vectorise at all: LRN's
``pow(k + alpha/n * sum, beta)`` and softmax's ``exp`` (also sigmoid, tanh,
GELU). RenderScript's math library defines the float4 overloads of these
functions as four calls of the scalar one (``rs_cl.c`` in AOSP
``frameworks/compile/libbcc``, ``lib/Renderscript/runtime``: ``FN_FUNC_FN(exp)``,
``FN_FUNC_FN_FN(pow)`` expand to ``r.x = fnc(v.x); ... r.w = fnc(v.w)``, C), and
the CPU driver resolves the scalar symbol to the C library's routine, so float4
code keeps one lane of four busy there (:data:`SCALAR_MATH_OPS`), whatever the
precision mode.
"""

from __future__ import annotations

from simulator.hardware.lanes import lane_fill

WINDOW_OPS = ("conv", "group_conv", "dwconv", "deconv")
VECTOR_OPS = (*WINDOW_OPS, "fc", "matmul")
# Layers whose per-element work is a math-library call evaluated one lane at a time.
SCALAR_MATH_OPS = ("lrn", "softmax", "sigmoid", "tanh", "gelu")


def simd_waste(record: dict, map_major: bool, lanes: int = 4,
               scalar_math: bool = True) -> float:
    """Idle-lane fraction of a kernel's vector code.

    Args:
        record: a trace row (uses ``op``, ``kernel``, ``in_channels``, ``groups``).
            Ops outside :data:`VECTOR_OPS` and :data:`SCALAR_MATH_OPS` (ReLU,
            pooling, batch norm, concatenation) vectorise along the maps: 0.
        map_major: whether feature maps are stored map-major.
        lanes: vector width in elements.
        scalar_math: whether math functions run as scalar library calls (the CPU
            driver); False for a GPU driver, whose compiler maps them to the
            GPU's own transcendental instructions (E).
    """
    op = record["op"]
    if op in SCALAR_MATH_OPS:  # one useful lane per scalar libm call
        return 1.0 - lane_fill(1, lanes) if scalar_math else 0.0
    if op not in VECTOR_OPS:
        return 0.0
    kernel = int(record.get("kernel") or 1)
    channels = int(record.get("in_channels") or 0)
    groups = max(1, int(record.get("groups") or 1))
    if op in ("fc", "matmul"):
        size = channels
    elif not map_major:  # planar: vectors along a kernel row
        size = kernel
    elif op == "dwconv":  # one channel per output: vectors span adjacent maps' outputs
        size = channels
    else:
        size = channels // groups if channels else 0
    return 1.0 - lane_fill(size, lanes)
