"""Dividing one operator's work among units: by output channels, rows or columns.

Each function returns the parts as trace records (copies of the operator's
record with their share of the work and of the bytes each part touches):

* by output channels (``outC``): a part computes some output maps; it needs
  only their kernels (weights divide) but, unless the operator is
  channel-local (depthwise, pooling, element-wise: map ``c`` reads only map
  ``c``), the whole input, which every part reads alike. Leftover channels
  (``C mod n``) are shared out by rows so the parts stay even;
* by rows (``inH``) or columns (``inW``): a part computes a band of the output;
  it reads its band of the input plus the ``kernel - stride`` boundary rows
  (halo) and, in an operator with weights, all the weights.

The record's shape columns describe the whole operator; parts keep them
(the cost model uses ``kernel``/``stride`` for window reuse) and scale the
``flops``, ``bytes_in``, ``bytes_out`` and ``weight_bytes`` columns. The split
over a board's units (:func:`.dos.plan_parts`) then cuts the split dimension's
column to each part's share (:func:`narrowed`; the shared-memory slices' rows,
the units' parts and the pieces :func:`fit_parameters` cuts for the weight
budget alike, ``in_channels`` for input-channel partial sums), which a MAC
array's padded lanes depend on.
"""

from __future__ import annotations

import math

CHANNEL_LOCAL = ("dwconv", "maxpool", "avgpool", "global_pool", "batchnorm", "relu",
                 "sigmoid", "tanh", "gelu", "add", "mul", "lrn", "shift", "rescale",
                 "quantize", "dequantize", "round", "sqrt", "copy", "concat", "slice")
AXES = ("outC", "inH", "inW")


def scaled(record: dict, *, work: float, out: float, inp: float, weights: float) -> dict:
    """A copy of ``record`` with its flops, output, input and weights scaled."""
    part = dict(record)
    part["flops"] = record["flops"] * work
    part["bytes_out"] = record["bytes_out"] * out
    part["bytes_in"] = record["bytes_in"] * inp
    part["weight_bytes"] = record["weight_bytes"] * weights
    return part


def extent(record: dict, axis: str) -> int:
    """Output channels, rows or columns of the operator (at least 1)."""
    column = {"outC": "out_channels", "inH": "out_h", "inW": "out_w"}[axis]
    return max(1, int(record.get(column) or 1))


def _shares(total: int, n: int) -> list[int]:
    """``total`` items over ``min(n, total)`` parts as evenly as integers allow."""
    n = max(1, min(n, total))
    base, extra = divmod(total, n)
    return [base + (1 if i < extra else 0) for i in range(n)]


def by_band(record: dict, n: int, axis: str) -> list[dict]:
    """Split into up to ``n`` bands of output rows (``inH``) or columns (``inW``)."""
    size = extent(record, axis)
    if size == 1 or n <= 1:
        return [dict(record)]
    in_size = max(1, int(record.get("in_h" if axis == "inH" else "in_w") or size))
    step = max(1, int(record.get("stride") or 1))
    halo = max(0, int(record.get("kernel") or 1) - step)
    parts = []
    for count in _shares(size, n):
        share = count / size
        reads = min(1.0, (count * in_size / size + halo) / in_size)
        parts.append(scaled(record, work=share, out=share, inp=reads, weights=1.0))
    return parts


def by_channels(record: dict, n: int) -> list[dict]:
    """Split into up to ``n`` parts by output channels, leftovers by rows."""
    channels = extent(record, "outC")
    local = record["op"] in CHANNEL_LOCAL
    if n <= 1:
        return [dict(record)]
    if channels < n:  # one channel each, the other units idle
        return [scaled(record, work=1 / channels, out=1 / channels,
                       inp=1 / channels if local else 1.0, weights=1 / channels)
                for _ in range(channels)]
    whole, left = divmod(channels, n)
    work = (whole + left / n) / channels
    weights = (whole + left) / channels  # the leftover maps' kernels too
    return [scaled(record, work=work, out=work, inp=work if local else 1.0, weights=weights)
            for _ in range(n)]


def split(record: dict, n: int, axis: str) -> list[dict]:
    """Split ``record`` into up to ``n`` parts along ``axis`` (``outC``/``inH``/``inW``)."""
    if axis == "outC":
        return by_channels(record, n)
    return by_band(record, n, axis)


def narrowed(part: dict, whole: dict, axis: str) -> dict:
    """``part`` of ``whole`` split along ``axis`` with that axis's shape column
    (``out_channels``, ``out_h`` or ``out_w``) cut to the part's share of it, so
    a cost model that looks at a kernel's dimensions (a MAC array's padded
    lanes, :mod:`simulator.hardware.mac_array`) sees the part's own. The share
    is the part's fraction of the output (a part with leftover channels
    computed by rows counts them pro rata)."""
    column = {"outC": "out_channels", "inH": "out_h", "inW": "out_w"}[axis]
    if not whole.get(column) or whole["bytes_out"] <= 0:
        return part
    share = part["bytes_out"] / whole["bytes_out"]
    return dict(part, **{column: max(1, round(extent(whole, axis) * share))})


def narrowed_inputs(piece: dict, whole: dict, share: float) -> dict:
    """``piece`` of ``whole`` that reads ``share`` of its input channels (an
    input-channel partial sum, whose output is the whole's: :func:`narrowed`
    cannot tell its share from ``bytes_out``) with ``in_channels`` cut to it."""
    if not whole.get("in_channels"):
        return piece
    return dict(piece, in_channels=max(1, round(int(whole["in_channels"]) * share)))


def fit_parameters(part: dict, budget: float, channels: int) -> tuple[list[dict], bool]:
    """Split one unit's part so its weights fit ``budget`` bytes of private memory.

    Output channels first (no extra work: each piece re-reads the input), then,
    when the part has fewer output channels than pieces are needed, input
    channels (each piece reads its share of the input and writes partial sums
    that a reduction adds up).

    Args:
        part: the unit's part.
        budget: bytes of the unit's private memory given to weights.
        channels: output channels the part computes.

    Returns:
        the pieces, run one after another on the unit, and whether they are
        partial sums that need a reduction. Each piece carries its own share of
        the dimension it splits (``out_channels``, or ``in_channels`` for
        partial sums), as the parts do (:func:`narrowed`).
    """
    weights = part["weight_bytes"]
    if weights <= budget or budget <= 0:
        return [part], False
    pieces = math.ceil(weights / budget)
    f = 1.0 / pieces
    if part["op"] in CHANNEL_LOCAL or pieces <= channels:
        inp = f if part["op"] in CHANNEL_LOCAL else 1.0
        piece = narrowed(scaled(part, work=f, out=f, inp=inp, weights=f), part, "outC")
        return [dict(piece) for _ in range(pieces)], False
    piece = narrowed_inputs(scaled(part, work=f, out=1.0, inp=f, weights=f), part, f)
    return [dict(piece) for _ in range(pieces)], True
