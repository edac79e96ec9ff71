"""Fit the Hexagon 698 (SD865) DSP to Mandheling's DSP measurements.

Four parameters, fitted jointly by least squares on log error (the project's
fitting engine, :func:`validation.fitting.least_squares_log`, in log space within
physical bounds):

* conv efficiency (fraction of the HVX INT8 peak a convolution reaches),
* dispatch overhead (FastRPC call + graph step per op),
* the DSP's path to the system-level cache (its L2 misses that the SLC holds),
* the DSP's DRAM path (what misses the SLC too),

to the 18 cells of the 64->64 3x3 INT8 conv batch/input table and the DSP
column of the DSP-unfriendly op table. The 32x32 b8/b4 cliff ratio (two of the
cells, checked on its own) is not in the loss and comes out +31 %: the model gives
8x8 b64 and 32x32 b4 (the same multiply-accumulates and bytes) one latency,
measured 1.84 and 2.50 ms, a mechanism it lacks (none found in Hexagon NN's V66
convolution: docs/mandheling.md, "The DSP conv table"). (A fit that minimised the worst
error over each check's tolerance passed that check too, with values within 5 %
of these: a loss shaped by the pass lines, not by the data, so it is not used.)
The capacities (1 MiB L2 from the paper,
the SoC's 3 MiB SLC), the clock (500 MHz), the replacement law and the batch
padding rule are not fitted (see ``socs/snapdragon865.yaml``).

Run: ``python -m validation.engine.fit_dsp``.
"""

from __future__ import annotations

import numpy as np

from simulator.hardware.cost import CostModel
from simulator.library import load_soc
from validation.fitting import least_squares_log
from validation.mandheling import refs
from validation.micro import conv_row, kernel_row


def reference_rows() -> list[tuple[dict, float]]:
    """(kernel row, reference ms) for every DSP cell."""
    cells = []
    for size, row_ms in refs.CONV_CLIFF_MS.items():
        for batch, ms in zip(refs.CONV_BATCHES, row_ms):
            cells.append((conv_row(64, 64, size, batch), ms))
    for op, (_, dsp_ms) in refs.UNFRIENDLY_OPS_MS.items():
        n = refs.UNFRIENDLY_TENSOR_BYTES[op]
        cells.append((kernel_row(op, "int8", n, n, n), dsp_ms))
    return cells


def predict(soc, rows, efficiency: float, overhead: float, dram: float,
            slc: float) -> np.ndarray:
    """Predicted ms of ``rows`` with the four parameters replaced."""
    dsp = soc.dsp.model_copy(update={
        "efficiency": {**soc.dsp.efficiency, "conv": efficiency},
        "dispatch_overhead": overhead, "dram_bandwidth": dram,
        "memory_bandwidth": {**soc.dsp.memory_bandwidth, "slc": slc}})
    model = CostModel(soc.model_copy(update={"dsp": dsp}))
    freq = dsp.opps[-1].frequency
    return np.array([model.kernel_cost("dsp", dsp.units, row).duration(freq) * 1e3
                     for row in rows])


def fit(soc_name: str = "snapdragon865") -> dict[str, float]:
    """Return the fitted parameters and the errors they give."""
    soc = load_soc(soc_name)
    cells = reference_rows()
    rows = [row for row, _ in cells]
    reference = np.array([ms for _, ms in cells])
    n_conv = len(refs.CONV_BATCHES) * len(refs.CONV_CLIFF_MS)
    # the 32x32 b4 and b8 cells (rows follow CONV_CLIFF_MS, then CONV_BATCHES)
    row = list(refs.CONV_CLIFF_MS).index(32) * len(refs.CONV_BATCHES)
    b4, b8 = row + refs.CONV_BATCHES.index(4), row + refs.CONV_BATCHES.index(8)

    def simulate(x: np.ndarray) -> np.ndarray:
        efficiency, overhead_ms, dram_mbs, slc_mbs = x
        return predict(soc, rows, efficiency, overhead_ms * 1e-3, dram_mbs * 1e6, slc_mbs * 1e6)

    def log_errors(x: np.ndarray) -> np.ndarray:
        """log(simulated / measured) of the 21 cells and of the cliff ratio."""
        sim = simulate(x)
        ratio = (sim[b8] / sim[b4]) / (reference[b8] / reference[b4])
        return np.append(np.log(sim / reference), np.log(ratio))

    start = [soc.dsp.efficiency.get("conv", 0.3), soc.dsp.dispatch_overhead * 1e3,
             (soc.dsp.dram_bandwidth or 1e9) / 1e6,
             soc.dsp.memory_bandwidth.get("slc", 1e9) / 1e6]
    # a fraction of the HVX peak; a positive per-op cost (ms); DRAM and SLC paths (MB/s)
    lower, upper = np.array([0.01, 1e-6, 1.0, 1.0]), np.array([1.0, 1e3, 1e6, 1e6])
    best = least_squares_log(lambda x: log_errors(x)[:-1], start, lower, upper)
    ratio_error = float(np.expm1(log_errors(best)[-1]) * 100)
    errors = np.abs(simulate(best) - reference) / reference * 100
    return {"conv_efficiency": best[0], "dispatch_overhead_ms": best[1],
            "dram_bandwidth_MBps": best[2], "slc_bandwidth_MBps": best[3],
            "cliff_ratio_error_pct": ratio_error,
            "conv_table_median_error_pct": float(np.median(errors[:n_conv])),
            "conv_table_max_error_pct": float(errors[:n_conv].max()),
            "op_table_max_error_pct": float(errors[n_conv:].max())}


if __name__ == "__main__":
    for name, value in fit().items():
        print(f"{name:32s} {value:10.4g}")
