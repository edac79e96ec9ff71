"""Trace rewrites that a framework's way of executing a model implies.

* :func:`serialize`: frameworks (TFLite, MNN) run one operator at a time, in
  topological order, each on all their threads; independent branches do not
  overlap.
* :func:`split_across`: one operator on cores of several clusters at once (4
  threads on a 1+3 big-core SoC): each kernel becomes one part per processor
  with a share of the work, each part reads the whole weights, and a kernel's
  parts all wait for all parts of its predecessors (the thread-pool barrier).
"""

from __future__ import annotations

import pandas as pd

from simulator.policy import Placement
from simulator.trace import Trace, trace_from_table

SCALED = ("flops", "bytes_in", "bytes_out")


def serialize(trace: Trace) -> Trace:
    """Make every kernel also wait for the one before it in topological order."""
    return trace.in_order(source=f"{trace.source} (serialized)")


def split_across(trace: Trace, parts: list[tuple[Placement, float]]
                 ) -> tuple[Trace, list[Placement]]:
    """Split every kernel of ``trace`` into ``len(parts)`` parts.

    Args:
        trace: the original trace.
        parts: (placement, fraction of the work) per part; fractions sum to 1.

    Returns:
        the split trace and the placement of each of its rows.
    """
    k = len(parts)
    if k == 1:
        return trace, [parts[0][0]] * len(trace)
    total = sum(fraction for _, fraction in parts)
    table = trace.table
    rows, placements = [], []
    for record in table.to_dict("records"):
        for p, (placement, fraction) in enumerate(parts):
            part = dict(record)
            share = fraction / total
            for column in SCALED:
                part[column] = record[column] * share
            if "batch" in part and part["batch"]:
                # keep batch-dependent quirks (DSP padding) on the whole batch
                part["batch"] = record["batch"]
            part["id"] = record["id"] * k + p
            part["name"] = f"{record['name']}[{p}]"
            part["deps"] = tuple(d * k + q for d in record["deps"] for q in range(k))
            rows.append(part)
            placements.append(placement)
    split = trace_from_table(pd.DataFrame(rows), source=f"{trace.source} (split {k}-way)")
    # trace_from_table orders rows topologically; map placements to the new order
    by_id = {row["id"]: placement for row, placement in zip(rows, placements)}
    return split, [by_id[int(kid)] for kid in split.table["id"]]
