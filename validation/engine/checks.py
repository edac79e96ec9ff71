"""Engine calibration checks on the Snapdragon 865 (Mandheling's Xiaomi 10).

* the DSP's batch/input-size cliff of a 64->64 3x3 INT8 convolution
  (per cell, and the median |error| over the 18 cells);
* the DSP-unfriendly ops on CPU (2 gold cores) and DSP;
* the CPU<->DSP switch.

The thermal case lives in :mod:`validation.engine.thermal_checks`.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from simulator.checks import check
from simulator.trace import trace_from_table
from validation.mandheling import refs
from validation.micro import conv_row, kernel_latency, kernel_row, run_trace

SOC = "snapdragon865"
TOLERANCE_CELL = 25.0
TOLERANCE_OP = 30.0  # the DSP-unfriendly op table (CPU and DSP columns)


@lru_cache(maxsize=None)
def conv_cell_ms(size: int, batch: int) -> float:
    """Simulated DSP latency (ms) of the reference convolution."""
    return kernel_latency(SOC, conv_row(64, 64, size, batch), "dsp") * 1e3


def _register_cells() -> None:
    for size, row_ms in refs.CONV_CLIFF_MS.items():
        for batch, ms in zip(refs.CONV_BATCHES, row_ms):
            check(f"sd865.dsp.conv64.{size}x{size}.b{batch}", reference=ms, unit="ms",
                  tolerance_pct=TOLERANCE_CELL, source=refs.SOURCE + ", conv batch table",
                  group="engine", status="calibration",  # fit_dsp's 18 cells
                  )(lambda s=size, b=batch: conv_cell_ms(s, b))


_register_cells()


@check("sd865.dsp.conv64.median_abs_error", reference=25.0, unit="%", tolerance_pct=0.0,
       source=refs.SOURCE + ", conv batch table (median |error| over 18 cells <= 25 %)",
       group="engine", status="calibration", kind="max")
def _median_error() -> float:
    errors = [abs(conv_cell_ms(size, batch) - ms) / ms * 100
              for size, row_ms in refs.CONV_CLIFF_MS.items()
              for batch, ms in zip(refs.CONV_BATCHES, row_ms)]
    return float(np.median(errors))


@check("sd865.dsp.conv64.cliff_ratio_32x32", reference=59.11 / 2.50, unit="x",
       tolerance_pct=TOLERANCE_CELL, source=refs.SOURCE + ", conv batch table (b=8 / b=4)",
       group="engine", status="calibration")  # two of the fitted cells
def _cliff_ratio() -> float:
    return conv_cell_ms(32, 8) / conv_cell_ms(32, 4)


def _unfriendly_ms(op: str, processor: str) -> float:
    n = refs.UNFRIENDLY_TENSOR_BYTES[op]
    units = 2 if processor == "cpu.gold" else None
    return kernel_latency(SOC, kernel_row(op, "int8", n, n, n), processor, units) * 1e3


for _op, (_cpu_ms, _dsp_ms) in refs.UNFRIENDLY_OPS_MS.items():
    check(f"sd865.unfriendly.{_op}.cpu", reference=_cpu_ms, unit="ms", tolerance_pct=TOLERANCE_OP,
          source=refs.SOURCE + ", DSP-unfriendly ops (CPU, 2 gold cores)",
          # the A77's INT8 layout-op efficiencies are fitted to this column
          group="engine", status="calibration")(lambda op=_op: _unfriendly_ms(op, "cpu.gold"))
    check(f"sd865.unfriendly.{_op}.dsp", reference=_dsp_ms, unit="ms", tolerance_pct=TOLERANCE_OP,
          source=refs.SOURCE + ", DSP-unfriendly ops (DSP)",  # fit_dsp's op-table cells
          group="engine", status="calibration")(lambda op=_op: _unfriendly_ms(op, "dsp"))


@check("sd865.cpu_dsp_switch", reference=refs.SWITCH_MS, unit="ms", tolerance_pct=20.0,
       source=refs.SOURCE + ", CPU<->DSP context switch (4 MiB INT8 activation)",
       group="engine", status="calibration")  # the offload bandwidth is fitted to it
def _switch_ms() -> float:
    """A CPU kernel whose 4 MiB output feeds a DSP kernel: the transfer between them."""
    n = refs.SWITCH_BYTES
    rows = [kernel_row("relu", "int8", n, n, n), kernel_row("relu", "int8", n, n, n)]
    rows[1].update(id=1, deps="0")
    trace = trace_from_table(pd.DataFrame(rows))
    result = run_trace(SOC, trace, {"name": "manual", "default": "cpu.gold",
                                    "kernels": {1: "dsp"}})
    transfers = result.transfers
    switch = transfers[transfers["label"] == result.kernels.sort_values("row")["label"].iloc[0]]
    return float((switch["end_s"] - switch["start_s"]).sum() * 1e3)
