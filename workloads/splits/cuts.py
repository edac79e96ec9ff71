"""Split points of a CNN: the tensors that cross each cut of its kernel DAG.

A split at point ``s`` runs kernels ``0 .. s-1`` (execution order, the trace's
row order) on the client and the rest on the server. Every tensor produced
before the cut and read after it must be sent: with residual branches
(ResNets) and parallel branches (Inception) a cut is crossed by several
tensors. Split 0 sends the model input (server-only); split ``N`` sends
nothing (device-only).

DynO keeps only the cuts whose tensors are all ReLU outputs (sparse, hence
compressible; it reports ~81 % fewer candidates), plus the two extremes:
:func:`candidate_splits`.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulator.trace import BYTES_PER_ELEMENT, Trace

INPUT = -1  # producer of the model input


@dataclass(frozen=True)
class CutTensor:
    """One tensor crossing a cut.

    Attributes:
        producer: row of the kernel that writes it (:data:`INPUT` for the model input).
        layer: the producer's layer (``input`` for the model input).
        op: the producer's op kind (``input`` for the model input).
        elements: elements of the tensor (batch included).
        nbytes: its size in the trace's precision (bytes).
        depth: the producer's position in the network, in [0, 1] (row / rows).
        channels: its channels (for the size model's per-channel statistics).
    """

    producer: int
    layer: str
    op: str
    elements: int
    nbytes: float
    depth: float
    channels: int = 1

    @property
    def relu(self) -> bool:
        return self.op == "relu"


@dataclass(frozen=True)
class SplitPoint:
    """A cut of the DAG.

    Attributes:
        index: kernels run on the client (rows ``0 .. index-1``).
        rows: kernels of the whole model.
        tensors: the tensors crossing it, in producer order.
        layer: the last client kernel's layer (``input`` for split 0).
    """

    index: int
    rows: int
    tensors: tuple[CutTensor, ...]
    layer: str

    @property
    def fraction(self) -> float:
        """Share of kernels on the client, in [0, 1]."""
        return self.index / self.rows if self.rows else 0.0

    @property
    def nbytes(self) -> float:
        """Bytes crossing unpacked."""
        return sum(t.nbytes for t in self.tensors)

    @property
    def relu_only(self) -> bool:
        return bool(self.tensors) and all(t.relu for t in self.tensors)


def _column(table, name: str, row: int, default: int = 1) -> int:
    if name not in table.columns:
        return default
    value = table[name].iloc[row]
    return int(value) if value == value and value else default  # NaN-safe


def input_tensor(trace: Trace) -> CutTensor:
    """The model input: what the kernels without predecessors read."""
    table = trace.table
    first = next(row for row, preds in enumerate(trace.preds) if not preds)
    size = BYTES_PER_ELEMENT[table["precision"].iloc[first]]
    nbytes = float(table["bytes_in"].iloc[first])
    return CutTensor(INPUT, "input", "input", int(nbytes // size), nbytes, 0.0,
                     _column(table, "in_channels", first))


def split_points(trace: Trace) -> list[SplitPoint]:
    """Every cut ``0 .. N`` of ``trace`` with the tensors crossing it."""
    table = trace.table
    n = len(trace)
    ops = table["op"].tolist()
    layers = (table["layer"] if "layer" in table.columns else table["name"]).tolist()
    out_bytes = table["bytes_out"].to_numpy(dtype=float)
    sizes = [BYTES_PER_ELEMENT[p] for p in table["precision"]]
    last_use = [max(succs) if succs else -1 for succs in trace.succs]
    points = [SplitPoint(0, n, (input_tensor(trace),), "input")]
    live: list[int] = []  # producers whose output is still needed after the cut
    for s in range(1, n + 1):
        row = s - 1
        live = [p for p in live if last_use[p] >= s]
        if last_use[row] >= s:
            live.append(row)
        tensors = tuple(CutTensor(p, str(layers[p]), ops[p], int(out_bytes[p] // sizes[p]),
                                  float(out_bytes[p]), p / n,
                                  _column(table, "out_channels", p))
                        for p in live)
        points.append(SplitPoint(s, n, tensors, str(layers[row])))
    return points


def candidate_splits(trace: Trace, relu_only: bool = True) -> list[SplitPoint]:
    """DynO's candidates: split 0, split N, and the cuts crossed only by ReLU outputs
    (all cuts when ``relu_only`` is false)."""
    points = split_points(trace)
    n = len(trace)
    return [p for p in points
            if p.index in (0, n) or not relu_only or p.relu_only]
