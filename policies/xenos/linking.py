"""Vertical optimisation: fused CBR operators and operator linking (Xenos).

1. **Fusion.** A convolution (or matrix product) followed by its batch norm,
   activation (ReLU, GELU, ...) and then a pooling layer, each the only reader
   of the one before, becomes one kernel (Xenos' library has CBR, CBR+MaxPool
   and CBR+AvgPool): the intermediate tensors never go through memory.
2. **Linking.** For a producer -> consumer pair on Xenos' pattern list, the
   producer writes its output in the order the consumer reads it, so the
   consumer's reads become sequential (``read_stride`` 0, see
   :mod:`.layouts`). The pattern list: ConvX -> ConvY for 3x3 -> 1x1, 5x5 ->
   1x1, 7x7 -> 1x1 and 3x3 -> 3x3 (depthwise counts as a convolution of its
   window), convolution -> pooling and pooling -> convolution (the ConvX ->
   ConvY -> Pooling and ConvX -> Pooling -> ConvY chains), shortcut
   connections (-> add) and MatMul -> MatMul. A producer writes one order: when
   its readers want different ones, the first reader on the list wins.
3. **Duplicated data.** A linked producer feeding a windowed convolution
   (``kernel > stride``) writes the consumer's row tiles with their halo rows
   repeated: its output grows by ``(kernel - stride) * tiles / rows`` (one tile
   per DSP unit), the memory cost Xenos accepts.
4. **On-chip dataflow.** Without linking, each operator's output feature map
   goes to external memory (DDR3) and the next operator reads it back: the
   trace's ``spill`` is 1 (:func:`spill_all`). A linked pair streams the
   producer's tiles, written in the consumer's order, to the consumer through
   on-chip memory (L2 SRAM / MSMC): neither side's share of that tensor goes
   off chip (:func:`link` sets each kernel's ``spill`` to the share of its
   input and output that still does).
"""

from __future__ import annotations

from simulator.trace import Trace

from ..rewrite import Rewriter
from .layouts import annotate, read_order

CONV_LIKE = ("conv", "dwconv", "deconv")
POOLS = ("maxpool", "avgpool")
MATMUL_LIKE = ("matmul", "fc")
FUSABLE_HEADS = (*CONV_LIKE, *MATMUL_LIKE)
ACTIVATIONS = ("relu", "gelu", "sigmoid", "tanh")
WINDOW_PAIRS = {(3, 1), (5, 1), (7, 1), (3, 3)}
MAX_DUPLICATION = 2.0


def fuse(trace: Trace) -> Trace:
    """Fold batch norm, ReLU and a following pooling into the operator before them."""
    records = trace.table.to_dict("records")
    succs, preds = trace.succs, trace.preds
    absorbed_into: dict[int, int] = {}
    chains: dict[int, list[int]] = {}
    for row, record in enumerate(records):
        if record["op"] not in FUSABLE_HEADS or row in absorbed_into:
            continue
        chain, current = [], row
        # each stage is optional, but they only fuse in this order
        for wanted in (("batchnorm",), ACTIVATIONS, POOLS):
            if len(succs[current]) != 1:
                break
            nxt = succs[current][0]
            if records[nxt]["op"] in wanted and len(preds[nxt]) == 1:
                chain.append(nxt)
                current = nxt
        if chain:
            chains[row] = chain
            for member in chain:
                absorbed_into[member] = row
    rw = Rewriter(trace)
    for row, record in enumerate(records):
        if row in absorbed_into:
            rw.alias(row, absorbed_into[row])
            continue
        members = chains.get(row, [])
        if members:
            last = records[members[-1]]
            record = dict(record)
            record["flops"] = record["flops"] + sum(records[m]["flops"] for m in members)
            record["weight_bytes"] = (record["weight_bytes"]
                                      + sum(records[m]["weight_bytes"] for m in members))
            record["bytes_out"] = last["bytes_out"]
            for column in ("out_h", "out_w", "out_channels"):
                if column in last:
                    record[column] = last[column]
            record["name"] = "+".join([record["name"], *(records[m]["op"] for m in members)])
        rw.finish(row, [rw.emit(record, None, rw.inputs(row))])
    fused, _ = rw.build("fused")
    return fused


def linkable(producer: dict, consumer: dict) -> bool:
    """Whether Xenos' pattern list covers the pair."""
    p, c = producer["op"], consumer["op"]
    if p in CONV_LIKE and c in CONV_LIKE:
        return (int(producer.get("kernel") or 1), int(consumer.get("kernel") or 1)) in WINDOW_PAIRS
    if (p in CONV_LIKE and c in POOLS) or (p in POOLS and c in CONV_LIKE):
        return True
    if c == "add":
        return True
    return p in MATMUL_LIKE and c in MATMUL_LIKE


def duplication(consumer: dict, tiles: int) -> float:
    """Output growth of a producer linked to ``consumer`` (halo rows per tile)."""
    kernel = int(consumer.get("kernel") or 0)
    step = max(1, int(consumer.get("stride") or 1))
    rows = int(consumer.get("in_h") or 0)
    if consumer["op"] not in CONV_LIKE or kernel <= step or rows <= 0:
        return 1.0
    return min(MAX_DUPLICATION, 1.0 + (kernel - step) * tiles / rows)


def spills(trace: Trace, on_chip: set[int]) -> list[float]:
    """Per row, the share of its activation bytes kept off chip: its output unless
    the row is in ``on_chip`` (a linked producer), its input unless every
    producer is (the model's input comes from external memory)."""
    records = trace.table.to_dict("records")
    out = []
    for row, record in enumerate(records):
        preds = trace.preds[row]
        input_off = 0.0 if preds and all(p in on_chip for p in preds) else record["bytes_in"]
        output_off = 0.0 if row in on_chip else record["bytes_out"]
        total = record["bytes_in"] + record["bytes_out"]
        out.append((input_off + output_off) / total if total > 0 else 0.0)
    return out


def spill_all(trace: Trace) -> list[float]:
    """Every kernel's activations off chip (operator-centric dataflow)."""
    return spills(trace, set())


def link(trace: Trace, tiles: int) -> Trace:
    """Link every pattern pair: the producer writes in its consumer's order.

    Args:
        trace: kernels after :func:`fuse`.
        tiles: row tiles per feature map (the DSP units), for the halo rows.

    Returns:
        the trace with ``read_stride`` set from the linked layouts, ``spill``
        from the linked pairs, and linked producers' outputs grown by their
        duplicated halo rows.
    """
    records = trace.table.to_dict("records")
    _, orders = annotate(trace)
    written: dict[int, str] = {}
    growth: dict[int, float] = {}
    for row, record in enumerate(records):
        if row in written:
            continue
        for succ in trace.succs[row]:
            consumer = records[succ]
            wanted = read_order(consumer) or orders[row]
            if linkable(record, consumer):
                written[row] = wanted
                growth[row] = duplication(consumer, tiles)
                break
    strides, _ = annotate(trace, written)
    table = trace.table.copy()
    table["read_stride"] = strides
    table["spill"] = spills(trace, set(written))
    for row, factor in growth.items():
        table.loc[row, "bytes_out"] = table.loc[row, "bytes_out"] * factor
    from simulator.trace import trace_from_table

    return trace_from_table(table, source=f"{trace.source} (linked)")
