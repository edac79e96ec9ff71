"""Micro-benchmarks: one kernel, or a small trace, through the full engine.

Validation checks measure the simulator the way the references were measured:
a kernel run alone on a processor at a fixed frequency, with the real engine
(dispatch, transfers, DVFS) rather than the bare cost formula.
"""

from __future__ import annotations

import pandas as pd

from simulator.engine.simulation import RunResult, simulate
from simulator.spec.experiment import ExperimentSpec
from simulator.trace import Trace, trace_from_table


def kernel_row(op: str, precision: str, flops: float, bytes_in: float, bytes_out: float,
               weight_bytes: float = 0.0, pass_: str = "fwd", **shape) -> dict:
    """A trace row for one kernel (sizes in bytes, flops in operations)."""
    return {"id": 0, "name": op, "op": op, "pass": pass_, "precision": precision,
            "flops": flops, "bytes_in": bytes_in, "bytes_out": bytes_out,
            "weight_bytes": weight_bytes, "deps": "", **shape}


def conv_row(channels_in: int, channels_out: int, size: int, batch: int, kernel: int = 3,
             precision: str = "int8") -> dict:
    """A same-padded stride-1 convolution on ``size`` x ``size`` inputs."""
    element = {"fp32": 4, "fp16": 2, "int8": 1}[precision]
    macs = channels_in * channels_out * kernel * kernel * size * size * batch
    return kernel_row("conv", precision, 2.0 * macs,
                      bytes_in=batch * channels_in * size * size * element,
                      bytes_out=batch * channels_out * size * size * element,
                      weight_bytes=channels_in * channels_out * kernel * kernel * element,
                      batch=batch, kernel=kernel, stride=1, in_channels=channels_in,
                      out_channels=channels_out, in_h=size, in_w=size, out_h=size, out_w=size)


def run_trace(soc: str, trace: Trace, policy: dict, governor: str = "performance",
              **experiment) -> RunResult:
    """Simulate ``trace`` once on ``soc`` under ``policy`` (thermal governor off)."""
    spec = ExperimentSpec.model_validate({
        "name": "micro", "soc": soc, "workload": {"trace": "<memory>"}, "policy": policy,
        "dvfs": {"governor": governor}, "thermal": {"governor": False},
        "outputs": {"timeline": False}, **experiment})
    return simulate(spec, traces={0: trace})


def kernel_latency(soc: str, row: dict, processor: str, units: int | None = None) -> float:
    """Seconds one kernel takes alone on ``processor`` at its top OPP."""
    policy = {"name": "single", "processor": processor}
    if units is not None:
        policy["cores"] = units
    result = run_trace(soc, trace_from_table(pd.DataFrame([row])), policy)
    return float(result.kernels["duration_s"].iloc[0])
