"""Rewriting a trace as a list of kernel records, and turning it back into a plan.

Mandheling's techniques each rewrite the training step: batch splitting turns
a kernel into micro-batch kernels, rescaling adds static-scale alternatives,
subgraph reuse adds graph-preparation kernels, the execution mode adds
ordering dependencies. They work on :class:`Rewrite` (records keyed by kernel
id, in topological order) and say where each kernel runs by *target* (``cpu``:
the policy's thread pool, ``dsp``, ``gpu``); :func:`assemble` then gives every
CPU kernel one part per cluster of the pool (equal work per thread, a barrier
between operators) and returns the trace and placements of the plan.
"""

from __future__ import annotations

import pandas as pd

from simulator.policy import Placement
from simulator.trace import Trace, trace_from_table

from .cpu import thread_share

Pool = list[tuple[Placement, float]]


class Rewrite:
    """A mutable kernel list: records (trace columns, ``deps`` as id tuples).

    Args:
        trace: the trace to start from.
    """

    def __init__(self, trace: Trace):
        self.records: list[dict] = trace.table.to_dict("records")
        for record in self.records:
            record["deps"] = tuple(int(d) for d in record["deps"])
            record["id"] = int(record["id"])
        self.source = trace.source
        self._next = max((r["id"] for r in self.records), default=-1) + 1

    def new_id(self) -> int:
        """A kernel id not used yet."""
        self._next += 1
        return self._next - 1

    def by_id(self) -> dict[int, dict]:
        return {record["id"]: record for record in self.records}

    def successors(self) -> dict[int, list[int]]:
        """Kernel id -> ids waiting for it."""
        out: dict[int, list[int]] = {record["id"]: [] for record in self.records}
        for record in self.records:
            for dep in record["deps"]:
                out[dep].append(record["id"])
        return out


def assemble(rewrite: Rewrite, target: dict[int, str], pools: dict[str, Pool],
             label: str) -> tuple[Trace, list[Placement], dict[int, list[int]]]:
    """Build the plan's trace and placements.

    Args:
        rewrite: the kernels, with their final dependencies.
        target: kernel id -> target name (a key of ``pools``).
        pools: target -> (placement, share of the work) per part; a kernel of a
            target with several parts becomes one kernel per part, each waiting
            for every part of its predecessors.
        label: appended to the trace's source.

    Returns:
        (trace, placement per trace row, kernel id -> ids of its parts).
    """
    parts_of: dict[int, list[int]] = {}
    next_id = max((r["id"] for r in rewrite.records), default=-1) + 1
    for record in rewrite.records:
        pool = pools[target[record["id"]]]
        if len(pool) == 1:
            parts_of[record["id"]] = [record["id"]]
        else:
            parts_of[record["id"]] = list(range(next_id, next_id + len(pool)))
            next_id += len(pool)
    rows, placement_of = [], {}
    for record in rewrite.records:
        pool = pools[target[record["id"]]]
        deps = tuple(p for dep in record["deps"] for p in parts_of[dep])
        for part_id, (placement, fraction) in zip(parts_of[record["id"]], pool):
            row = thread_share(record, fraction) if len(pool) > 1 else dict(record)
            if len(pool) > 1:
                row["name"] = f"{record['name']}[{placement.processor}]"
            row["id"], row["deps"] = part_id, deps
            rows.append(row)
            placement_of[part_id] = placement
    trace = trace_from_table(pd.DataFrame(rows), source=f"{rewrite.source} ({label})")
    placements = [placement_of[int(kid)] for kid in trace.table["id"]]
    return trace, placements, parts_of
