"""Fit the Hexagon 698 (SD865) DSP to Mandheling's DSP measurements.

Three parameters, fitted jointly by least squares on log error (the project's
fitting engine, :func:`validation.fitting.least_squares_log`, in log space within
physical bounds):

* conv efficiency (fraction of the HVX INT8 peak a convolution reaches),
* dispatch overhead (FastRPC call + graph step per op),
* the DSP's L2-miss-bound DRAM path bandwidth,

to the 18 cells of the 64->64 3x3 INT8 conv batch/input table and the DSP
column of the DSP-unfriendly op table. The cache capacity (1 MiB L2), clock
(500 MHz) and batch padding rule are facts from the paper and are not fitted.

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


def predict(soc, rows, efficiency: float, overhead: float, dram: float) -> np.ndarray:
    """Predicted ms of ``rows`` with the three parameters replaced."""
    dsp = soc.dsp.model_copy(update={
        "efficiency": {**soc.dsp.efficiency, "conv": efficiency},
        "dispatch_overhead": overhead, "dram_bandwidth": dram})
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

    def residuals(x: np.ndarray) -> np.ndarray:
        efficiency, overhead_ms, dram_mbs = x
        sim = predict(soc, rows, efficiency, overhead_ms * 1e-3, dram_mbs * 1e6)
        return np.log(sim / reference)

    start = [soc.dsp.efficiency.get("conv", 0.3), soc.dsp.dispatch_overhead * 1e3,
             (soc.dsp.dram_bandwidth or 1e9) / 1e6]
    # a fraction of the HVX peak; a positive per-op cost (ms) and DRAM path (MB/s)
    best = least_squares_log(residuals, start, [0.01, 1e-6, 1.0], [1.0, 1e3, 1e6])
    sim = predict(soc, rows, best[0], best[1] * 1e-3, best[2] * 1e6)
    errors = np.abs(sim - reference) / reference * 100
    return {"conv_efficiency": best[0], "dispatch_overhead_ms": best[1],
            "dram_bandwidth_MBps": best[2], "conv_table_median_error_pct":
            float(np.median(errors[:18])), "op_table_max_error_pct": float(errors[18:].max())}


if __name__ == "__main__":
    for name, value in fit().items():
        print(f"{name:32s} {value:10.4g}")
