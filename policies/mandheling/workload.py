"""What the training policies run: an FP32 or an integer training step, and its memory.

The FP32 baselines train the workload as given and refuse a mixed-precision
trace. The integer policies (MNN-INT8, Mandheling) translate an FP32 trace
with their ``algorithm`` (``workloads/algorithms``), or run a trace the
workload already translated (``workload.algorithm``). :func:`peak_memory`
is the memory a framework needs for one step run in trace order: every tensor
lives from the kernel that writes it to its last reader (the forward
activations until the backward pass), plus the model's weights.
"""

from __future__ import annotations

import numpy as np

from simulator.errors import ConfigError
from simulator.policy import Job
from simulator.trace import Trace
from workloads.mixed_precision import apply_algorithm, load_algorithm


def fp32_trace(job: Job, policy: str) -> Trace:
    """The job's trace, which must be all FP32."""
    precisions = set(job.trace.table["precision"])
    if precisions != {"fp32"}:
        raise ConfigError(f"{policy} trains in FP32; the workload has "
                          f"{', '.join(sorted(precisions))} kernels (leave out "
                          "'algorithm' and 'precision')")
    return job.trace


def integer_trace(job: Job, algorithm: str, require_dsp_support: bool = False) -> Trace:
    """The job's trace in the integer training algorithm.

    An all-FP32 trace is translated with ``algorithm``; a trace that already has
    integer kernels (the workload named its algorithm) is used as it is.

    Raises:
        ConfigError: the algorithm is unknown, or Mandheling does not support it.
    """
    translated = "int8" in set(job.trace.table["precision"])
    name = job.params.get("algorithm") if translated else algorithm
    if require_dsp_support and name is not None:
        algo = load_algorithm(name)
        if not algo.mandheling_supported:
            raise ConfigError(f"algorithm {algo.name!r} is not supported by Mandheling "
                              "(its data types have no DSP integer path)", path="algorithm")
    if translated:
        return job.trace
    try:
        return apply_algorithm(job.trace, algorithm)
    except ConfigError as err:
        raise err.within(prefix="algorithm") if err.file is None else err from None


def peak_memory(trace: Trace) -> float:
    """Bytes a framework needs to run ``trace`` in row order (one training step).

    Each kernel's output lives from the kernel to its last reader (to the end of
    the step if nobody reads it); the weights of every layer live throughout.
    """
    table = trace.table
    n = len(table)
    out = table["bytes_out"].to_numpy(dtype=float)
    last = np.array([max(succs) if succs else n - 1 for succs in trace.succs], dtype=int)
    delta = np.zeros(n + 1)
    np.add.at(delta, np.arange(n), out)
    np.add.at(delta, last + 1, -out)
    live = np.cumsum(delta[:n])
    if "layer" in table.columns:
        weights = float(table.groupby("layer")["weight_bytes"].max().sum())
    else:
        weights = float(table.loc[table["pass"] == "fwd", "weight_bytes"].sum())
    return float(live.max(initial=0.0)) + weights
