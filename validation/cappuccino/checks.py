"""Cappuccino checks on the Nexus 5 (Snapdragon 800).

* group ``cappuccino`` (calibration: the seed notes list the whole Nexus 5 table
  as calibration figures): the single-threaded baseline of AlexNet, SqueezeNet
  and GoogLeNet, the row the Java interpretation overhead is fitted to; the exact
  parallel column, the one RenderScript's code overhead and row-loop cost are
  fitted to (``python -m validation.cappuccino.fit --fit``); and the imprecise
  column, which no parameter is fitted to: it tests the vector-code mechanism
  (float4 lanes, idle lanes, scalar math calls, memory-bound FC layers, the GPU
  driver) with the overheads fitted on the other two;
* the SqueezeNet energy ratio of the single-threaded program over Cappuccino, also
  in the notes' calibration list and also not fitted; the other phones are
  predictions, reported by ``validation.cappuccino.report``.
"""

from __future__ import annotations

from functools import lru_cache

from simulator.checks import check
from validation.cappuccino import fit as calibration
from validation.cappuccino import refs

CALIBRATION_TOLERANCE = 15.0
FITTED_MODES = ("baseline", "parallel")  # the imprecise column is calibration, not fitted


def _register() -> None:
    for model, row in refs.NEXUS5_MS.items():
        for mode, ms in zip(refs.MODES, row):
            fitted = mode in FITTED_MODES
            check(f"cappuccino.nexus5.{model}.{mode}", reference=ms, unit="ms",
                  tolerance_pct=CALIBRATION_TOLERANCE,
                  source=refs.SOURCE + (f", {mode} column (fitted)" if fitted else
                                        f", {mode} column (calibration, not fitted)"),
                  group="cappuccino", status="calibration",
                  )(lambda m=model, md=mode: calibration.latency_ms(refs.SOC, m, md))


_register()


@lru_cache(maxsize=None)
def _energy_j(mode: str) -> float:
    return calibration.run(refs.SOC, "squeezenet1_0", mode).metrics["energy_j"]


@check("cappuccino.nexus5.squeezenet1_0.energy_ratio",
       reference=refs.ENERGY_SINGLE_J / refs.ENERGY_CAPPUCCINO_J, unit="x",
       tolerance_pct=CALIBRATION_TOLERANCE,
       source=refs.SOURCE + ", SqueezeNet energy, single-threaded / Cappuccino (exact mode; "
       "in the notes' calibration list, nothing fitted to it)",
       group="cappuccino", status="calibration")
def _energy_ratio() -> float:
    return _energy_j("baseline") / _energy_j("parallel")
