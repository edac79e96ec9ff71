"""An absolute anchor for the C6678: a large single-precision GEMM's rate per watt.

The board's HO range fixes only ratios (Vanilla against HO). What anchors its
absolute time is the speed of the ``xenos`` library's matrix-product kernels,
taken from TI's C66x DSPLIB (``socs/tms320c6678.yaml``), and the one public
whole-chip measurement of a tuned GEMM found for this device: Ali, Stotzer and
Igual ("Level-3 BLAS on the TI C6678 multi-core DSP", TI / UCM) report "about
8 single precision GFLOPS/watt" for GEMM on the eight cores (their abstract; the
C6678 at 1 GHz, its 128 GFLOPS peak).

This module runs one ``n x n x n`` SGEMM through the Xenos policy on the board
at 1 GHz (the paper's clock) and returns its GFLOPS per watt of the board's
average power. The rate per watt mixes time and power (the power model is an
estimate, and the paper's abstract does not say whether it measured the chip or
the board), so this is a prediction check, not a fit.
"""

from __future__ import annotations

import pandas as pd

from simulator.engine.simulation import simulate
from simulator.spec.experiment import ExperimentSpec
from simulator.trace import Trace, trace_from_table
from validation.xenos import refs

SOURCE = ("Ali, Stotzer, Igual, 'Level-3 BLAS on the TI C6678 multi-core DSP' (abstract: "
          "about 8 SP GFLOPS/W for GEMM, 8 cores at 1 GHz)")
GFLOPS_PER_WATT = 8.0
CLOCK = "1 GHz"  # the paper's C6678 (128 GFLOPS peak)
SIZE = 1024


def sgemm_trace(n: int = SIZE) -> Trace:
    """One FP32 ``n x n`` by ``n x n`` matrix product as a one-kernel trace (A as the
    input, B as the weights: DOS gives each unit its columns of B)."""
    nbytes = 4.0 * n * n
    return trace_from_table(pd.DataFrame([{
        "id": 0, "name": "sgemm", "op": "matmul", "pass": "fwd", "precision": "fp32",
        "flops": 2.0 * n ** 3, "bytes_in": nbytes, "bytes_out": nbytes,
        "weight_bytes": nbytes, "deps": "", "in_channels": n, "out_channels": n,
        "in_h": n, "in_w": 1, "out_h": n, "out_w": 1}]), source=f"sgemm {n}")


def run(n: int = SIZE) -> tuple[float, float]:
    """Seconds and average board power (W) of one ``n``-sized SGEMM under Xenos (HO+VO)
    on the board at :data:`CLOCK`."""
    spec = ExperimentSpec.model_validate({
        "name": "sgemm", "soc": refs.SOC, "workload": {"model": "lenet5"},
        "policy": {"name": "xenos"}, "dvfs": {"governor": "userspace", "frequency": CLOCK},
        "outputs": {"timeline": False, "kernels": False, "timeseries": False}})
    metrics = simulate(spec, traces={0: sgemm_trace(n)}).metrics
    return metrics["latency_s"], metrics["avg_power_w"]


def gflops_per_watt(n: int = SIZE) -> float:
    """GFLOPS per watt of board power of one ``n``-sized SGEMM."""
    seconds, watts = run(n)
    return 2.0 * n ** 3 / seconds / 1e9 / watts


def main() -> None:
    seconds, watts = run()
    gflops = 2.0 * SIZE ** 3 / seconds / 1e9
    print(f"SGEMM {SIZE}: {seconds * 1e3:.2f} ms, {gflops:.1f} GFLOPS "
          f"({100 * gflops / 128:.0f} % of the 128 GFLOPS peak at {CLOCK}), {watts:.2f} W, "
          f"{gflops / watts:.2f} GFLOPS/W (paper: about {GFLOPS_PER_WATT:g})")


if __name__ == "__main__":
    main()
