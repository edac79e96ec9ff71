"""Execution order: one operator at a time, or CPU and DSP subgraphs in parallel.

An engine runs one operator at a time in topological order
(:func:`serial_order`). With CPU-DSP parallel execution, the CPU and the DSP
each still run their own operators one at a time in that order, but a CPU
operator no longer waits for an unrelated DSP operator (or the reverse): only
the data dependencies of the training step order work across the two
(:func:`per_processor_order`), e.g. the FP32 batch-norm backward of one layer
on the CPU overlaps the weight-gradient convolution of the next on the DSP.
"""

from __future__ import annotations

from .rows import Rewrite


def serial_order(rewrite: Rewrite) -> None:
    """Every kernel waits for the one before it in the records' order."""
    previous = None
    for record in rewrite.records:
        if previous is not None and previous not in record["deps"]:
            record["deps"] = (*record["deps"], previous)
        previous = record["id"]


def per_processor_order(rewrite: Rewrite, target: dict[int, str]) -> None:
    """Every kernel waits for the previous kernel of its own target."""
    last: dict[str, int] = {}
    for record in rewrite.records:
        where = target[record["id"]]
        previous = last.get(where)
        if previous is not None and previous not in record["deps"]:
            record["deps"] = (*record["deps"], previous)
        last[where] = record["id"]
