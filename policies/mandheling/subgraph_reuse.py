"""DSP compute-subgraph reuse under the DSP memory budget (MRU release).

After placement, consecutive DSP operators (in execution order) form a DSP
*subgraph*. An engine prepares every subgraph before running it: it
allocates DSP memory for its tensors and weights and builds its op
references (Hexagon NN through FastRPC), which costs ``graph_setup`` per
operator (the DSP's kernel-library table in the SoC file; fitted to the
paper's 212 ms per VGG-16 batch on MNN, 304 ms on TFLite). Engines redo it
every batch; the model structure does not change, so Mandheling keeps the
prepared subgraphs. Keeping all of them can exceed the DSP's
``memory_budget``. Memory is allocated in execution order, so the most
recently used region is the one needed again last: when a subgraph does not
fit, :func:`residency` releases regions most-recently-used first until it
fits (in a loop over the same subgraphs every batch this is Belady's choice:
the region reused farthest in the future goes first; releasing a better
fitting but older region instead frees one needed sooner). Released
subgraphs are prepared again when next used.

Preparation kernels (one per subgraph, ``fixed_s`` = operators x
``graph_setup`` + ``subgraph_setup``) run on the DSP at the start of each
batch; the plan skips those of subgraphs that are still prepared. A model
with many small CPU/DSP subgraphs (a ResNet's batch-norm islands on the CPU)
pays the per-graph part many times.

Running a prepared subgraph is one FastRPC call (Hexagon NN executes the
graph's nodes on the DSP, each a work-item dispatch to the HVX threads): the
subgraph's entry pays the DSP's per-call ``dispatch_overhead`` (a standalone
operator's cost, fitted to the Mandheling op tables), every node the kernel
library's smaller per-node ``dispatch_overhead`` (:func:`add_calls`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .rows import Rewrite


@dataclass
class Subgraph:
    """A run of consecutive DSP kernels.

    Attributes:
        kernels: ids, in execution order (static-scale alternatives included).
        operators: operators to prepare (alternatives are versions of one).
        memory: bytes of DSP memory its prepared graph holds.
        prepare: id of its preparation kernel (None when not added).
    """

    kernels: list[int] = field(default_factory=list)
    operators: int = 0
    memory: float = 0.0
    prepare: int | None = None


def find_subgraphs(rewrite: Rewrite, target: dict[int, str], alternatives: set[int],
                   dsp: str = "dsp", origin: dict[int, int] | None = None) -> list[Subgraph]:
    """Maximal runs of consecutive ``dsp`` kernels in the records' order.

    Args:
        origin: micro-batch kernel id -> the operator it is a part of (batch
            splitting): the parts of one operator are one operator of the graph
            (prepared once, its weights held once; a weight gradient, which
            every part writes whole, held once).
    """
    origin = origin or {}
    parts: dict[int, int] = {}
    for operator in origin.values():
        parts[operator] = parts.get(operator, 0) + 1
    out: list[Subgraph] = []
    current: Subgraph | None = None
    seen: set[int] = set()
    for record in rewrite.records:
        if target[record["id"]] != dsp:
            current = None
            continue
        if current is None:
            current = Subgraph()
            # its input, whole (a split first operator's part reads a share)
            share = parts.get(origin.get(record["id"], record["id"]), 1)
            current.memory = float(record["bytes_in"]) * share
            out.append(current)
        current.kernels.append(record["id"])
        if record["id"] in alternatives:
            continue
        operator = origin.get(record["id"], record["id"])
        first = operator not in seen
        seen.add(operator)
        if first:
            current.operators += 1
            current.memory += float(record["weight_bytes"])
        if first or record["pass"] != "bwd_weight":
            current.memory += float(record["bytes_out"])
    return out


def residency(memory: list[float], budget: float | None, batches: int = 6) -> list[set[int]]:
    """Which subgraphs are prepared in each of ``batches`` batches.

    Args:
        memory: bytes each subgraph holds, in execution order.
        budget: DSP memory available (None: unlimited).
        batches: batches to simulate (from the first, which prepares all).

    Returns:
        per batch, the indices of the subgraphs prepared in it.
    """
    budget = float("inf") if budget is None else budget
    resident: dict[int, int] = {}  # subgraph -> last use (a counter)
    clock = 0
    out = []
    for _ in range(batches):
        prepared = set()
        for index, need in enumerate(memory):
            clock += 1
            if index in resident:
                resident[index] = clock
                continue
            prepared.add(index)
            if need > budget:
                continue  # cannot stay: prepared for this use only
            _release(resident, memory, need - (budget - sum(memory[i] for i in resident)))
            resident[index] = clock
        out.append(prepared)
    return out


def prepared_in(prepared: list[set[int]], batch: int) -> set[int]:
    """Subgraphs prepared in ``batch`` of a run whose first batches :func:`residency`
    simulated: past them, the shortest cycle their tail repeats (releases can make
    batches alternate) continues."""
    if batch < len(prepared):
        return prepared[batch]
    n = len(prepared)
    period = next((p for p in range(1, n // 2 + 1)
                   if prepared[n - p:] == prepared[n - 2 * p:n - p]), 1)
    return prepared[n - period + (batch - n) % period]


def _release(resident: dict[int, int], memory: list[float], deficit: float) -> None:
    """Free at least ``deficit`` bytes, most recently used regions first."""
    for index in sorted(resident, key=lambda i: -resident[i]):
        if deficit <= 0:
            return
        del resident[index]
        deficit -= memory[index]


def add_preparation(rewrite: Rewrite, subgraphs: list[Subgraph], target: dict[int, str],
                    setup: float, dsp: str = "dsp", per_subgraph: float = 0.0) -> None:
    """Add one preparation kernel per subgraph at the start of the step (chained):
    ``setup`` seconds per operator plus ``per_subgraph`` seconds per graph; each
    subgraph's first kernel waits for its preparation."""
    previous = None
    records = []
    first = {sub.kernels[0]: sub for sub in subgraphs}
    for sub in subgraphs:
        kid = rewrite.new_id()
        sub.prepare = kid
        records.append({"id": kid, "name": f"dsp_subgraph{len(records)}.prepare", "op": "copy",
                        "pass": "other", "precision": "int8", "flops": 0.0, "bytes_in": 0.0,
                        "bytes_out": 0.0, "weight_bytes": 0.0,
                        "fixed_s": setup * sub.operators + per_subgraph,
                        "deps": () if previous is None else (previous,)})
        target[kid] = dsp
        previous = kid
    for record in rewrite.records:
        sub = first.get(record["id"])
        if sub is not None:
            record["deps"] = (*record["deps"], sub.prepare)
    rewrite.records = records + rewrite.records


def add_calls(rewrite: Rewrite, subgraphs: list[Subgraph], target: dict[int, str],
              call: float, dsp: str = "dsp") -> None:
    """One FastRPC call per subgraph run: a kernel of ``call`` seconds on the DSP
    that the subgraph's first kernel waits for (the graph's nodes then run on
    the DSP without a round trip each: the library's per-node step)."""
    if call <= 0:
        return
    by_id = rewrite.by_id()
    calls: dict[int, dict] = {}
    for index, sub in enumerate(subgraphs):
        first = by_id[sub.kernels[0]]
        kid = rewrite.new_id()
        calls[first["id"]] = {"id": kid, "name": f"dsp_subgraph{index}.call", "op": "copy",
                              "pass": "other", "precision": "int8", "flops": 0.0,
                              "bytes_in": 0.0, "bytes_out": 0.0, "weight_bytes": 0.0,
                              "fixed_s": call, "deps": first["deps"]}
        first["deps"] = (*first["deps"], kid)
        target[kid] = dsp
    records = []
    for record in rewrite.records:
        entry = calls.get(record["id"])
        if entry is not None:
            # the call waits for what the subgraph's first kernel waited for
            entry["deps"] = tuple(d for d in record["deps"] if d != entry["id"])
            records.append(entry)
        records.append(record)
    rewrite.records = records
