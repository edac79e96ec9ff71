"""Memory traffic over time, per memory level (the Xenos memory-usage figure).

Each kernel's cost says how many bytes every level of its memory hierarchy
served (``KernelCost.level_bytes``); spread evenly over the kernel's run and
summed over the kernels running at once, that is each level's traffic (B/s)
over time. :func:`traffic_samples` bins it into time-series samples named
``traffic.<level>`` (``<device>:traffic.<level>`` on other devices), the way
``power.*`` series are sampled.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np


def traffic_samples(kernels, placements, trace, context, default_device: str,
                    period: float) -> list[tuple[float, str, float]]:
    """Per-level traffic of one job's kernels as ``(time_s, name, B/s)`` samples.

    Args:
        kernels: the run's kernel records (columns ``row``, ``start_s``, ``end_s``)
            of the job whose plan this is.
        placements: the plan's placement per trace row.
        trace: the trace the plan ran.
        context: the run's policy context (cost models).
        default_device: the job's device (names without a ``device:`` prefix).
        period: bin width (s).

    Returns:
        one sample per bin and level, at the bin's end, averaged over the bin.
    """
    if kernels.empty or period <= 0:
        return []
    records = trace.table.to_dict("records")
    end = float(kernels["end_s"].max())
    bins = max(1, math.ceil(end / period))
    series: dict[str, np.ndarray] = defaultdict(lambda: np.zeros(bins))
    for row, start, stop in zip(kernels["row"], kernels["start_s"], kernels["end_s"]):
        placement = placements[int(row)]
        device, local = context.resolve(placement.processor, default_device)
        cost = context.cost_model(device).kernel_cost(
            local, placement.units, records[int(row)], placement.library,
            placement.memory_share)
        prefix = "" if device == default_device else f"{device}:"
        for level, nbytes in cost.level_bytes:
            _spread(series[f"{prefix}traffic.{level}"], start, stop, nbytes, period)
    samples = []
    for name in sorted(series):
        for i, moved in enumerate(series[name]):
            samples.append(((i + 1) * period, name, float(moved / period)))
    return samples


def _spread(target: np.ndarray, start: float, stop: float, nbytes: float,
            period: float) -> None:
    """Add ``nbytes`` moved evenly over ``[start, stop]`` to the bins of ``target``."""
    if stop <= start:
        target[min(len(target) - 1, int(start / period))] += nbytes
        return
    rate = nbytes / (stop - start)
    first, last = int(start / period), min(len(target) - 1, int(stop / period))
    for i in range(first, last + 1):
        lo, hi = max(start, i * period), min(stop, (i + 1) * period)
        if hi > lo:
            target[i] += rate * (hi - lo)
