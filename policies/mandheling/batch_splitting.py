"""Batch splitting: run DSP operators whose batch overflows the DSP cache as micro-batches.

Offline profiling (here: the cost model of the DSP) times each operator at
the training batch ``B`` and as ``m`` micro-batches of ``B / m`` for every
divisor ``m`` of ``B``. An operator is *abnormal* when its latency per sample
at ``B`` exceeds ``threshold`` times the best latency per sample of a
micro-batch (the DSP's batch padding and its cache make large batches far
slower than their work). An abnormal operator becomes ``m`` kernels run one
after another, with the ``m`` that minimises the total; weight gradients
accumulate in place (each micro-batch writes the whole gradient; the INT8
rescale to the common scale is free when the scales are equal, the common
case), so splitting adds no computation.
"""

from __future__ import annotations

import math
from collections.abc import Callable

# Kernels whose work does not scale with the batch (weights only).
_WEIGHT_ONLY = ("sgd_update", "weight_rotate", "transpose", "loss")
_SPLIT_PASSES = ("fwd", "bwd_data", "bwd_weight")
_RESCALE = ("reduce_max", "shift")


def splittable(record: dict) -> bool:
    """Whether the kernel's work is per sample (so micro-batches divide it). The
    rescaling of a weight gradient (its ReduceMax and Shift) works on the
    gradient, a weight-sized tensor: no batch dimension to split."""
    if record["pass"] == "bwd_weight" and record["op"] in _RESCALE:
        return False
    return (record["pass"] in _SPLIT_PASSES and record["op"] not in _WEIGHT_ONLY
            and int(record.get("batch") or 0) > 1)


def micro_batch(record: dict, parts: int) -> dict:
    """One of ``parts`` micro-batch kernels of ``record``."""
    part = dict(record)
    part["batch"] = int(record["batch"]) // parts
    part["flops"] = record["flops"] / parts
    part["bytes_in"] = record["bytes_in"] / parts
    if record["pass"] != "bwd_weight":  # a weight gradient is written whole by every part
        part["bytes_out"] = record["bytes_out"] / parts
    return part


def best_split(record: dict, latency: Callable[[dict], float],
               threshold: float = 1.5) -> tuple[int, float]:
    """(micro-batches, total seconds) for one kernel; (1, latency) if not abnormal.

    Args:
        record: the kernel.
        latency: seconds of a kernel on the DSP (inf if it cannot run there).
        threshold: how much worse per sample the full batch must be.
    """
    whole = latency(record)
    if math.isinf(whole) or not splittable(record):
        return 1, whole
    batch = int(record["batch"])
    options = []
    for parts in range(2, batch + 1):
        if batch % parts == 0:
            seconds = latency(micro_batch(record, parts))
            options.append((parts, seconds * parts, seconds / (batch // parts)))
    if not options:
        return 1, whole
    best_per_sample = min(per_sample for _, _, per_sample in options)
    if whole / batch <= threshold * best_per_sample:
        return 1, whole
    parts, total, _ = min(options, key=lambda option: (option[1], option[0]))
    return (parts, total) if total < whole else (1, whole)
