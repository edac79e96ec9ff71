"""The access order of an operator-centric DSP library, as ``read_stride`` per kernel.

Every operator of such a library writes its output in one canonical order,
channel-planar (``planar``: each feature map contiguous, as NCHW). Operators
read in the order their inner loop wants:

* ``interleaved`` (all channels of one position together, as NHWC): pointwise
  (1x1) convolutions, fully connected layers, matrix products and LSTM cells
  (a dot product over the features of a position), pooling (vectorised across
  channels, Xenos' example), softmax and layer norm (over the features of a
  position);
* ``planar``: convolutions with a window (direct convolution, one input plane
  at a time, as DSP kernel libraries do), grouped, depthwise and transposed
  convolutions, and global pooling (one map at a time);
* whatever their input is in: element-wise operators, adds, concatenations,
  slices and shuffles (they write in the order they read).

A consumer reading a planar tensor in interleaved order jumps ``H*W*e`` bytes
between consecutive reads (``e`` = element size), one reading an interleaved
tensor in planar order jumps ``C*e``; in the producer's order it reads
sequentially. The jump is the kernel's ``read_stride`` (the largest over its
inputs); the cost model turns it into cache misses.
"""

from __future__ import annotations

from simulator.trace import BYTES_PER_ELEMENT, Trace

PLANAR = "planar"
INTERLEAVED = "interleaved"

INTERLEAVED_READERS = ("fc", "matmul", "lstm", "maxpool", "avgpool", "softmax", "layernorm")
PLANAR_READERS = ("dwconv", "deconv", "global_pool")


def read_order(record: dict) -> str | None:
    """The order ``record``'s operator reads its input in (None: its input's order)."""
    op = record["op"]
    if op == "conv":
        pointwise = int(record.get("kernel") or 1) <= 1 and int(record.get("groups") or 1) <= 1
        return INTERLEAVED if pointwise else PLANAR
    if op in INTERLEAVED_READERS:
        return INTERLEAVED
    if op in PLANAR_READERS:
        return PLANAR
    return None


def stride(producer: dict, order: str, written: str) -> float:
    """Bytes between consecutive reads of ``producer``'s output read in ``order``."""
    if order == written:
        return 0.0
    element = BYTES_PER_ELEMENT[producer["precision"]]
    if order == INTERLEAVED:  # across the maps of a planar tensor
        return float(int(producer.get("out_h") or 1) * int(producer.get("out_w") or 1)
                     * element)
    return float(int(producer.get("out_channels") or 1) * element)


def annotate(trace: Trace, written: dict[int, str] | None = None) -> tuple[list[float], list[str]]:
    """Read strides and write orders of the vanilla library.

    Args:
        trace: the kernels (rows in topological order).
        written: order a row writes in, overriding the library's (linked producers).

    Returns:
        ``(read_stride per row, write order per row)``.
    """
    records = trace.table.to_dict("records")
    written = dict(written or {})
    orders: list[str] = []
    strides: list[float] = []
    for row, record in enumerate(records):
        preds = trace.preds[row]
        wanted = read_order(record)
        order = wanted or (orders[preds[0]] if preds else PLANAR)
        strides.append(max((stride(records[p], order, orders[p]) for p in preds),
                           default=0.0))
        if row in written:
            orders.append(written[row])
        else:
            # compute operators write the library's planar order; the rest keep theirs
            orders.append(PLANAR if wanted is not None else order)
    return strides, orders
