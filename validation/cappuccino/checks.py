"""Cappuccino checks on the Nexus 5 (Snapdragon 800).

* group ``cappuccino`` (calibration): the single-threaded baseline of AlexNet,
  SqueezeNet and GoogLeNet, the row the Java interpretation overhead is fitted
  to, and the exact parallel column, the one RenderScript's code overhead is
  fitted to (``python -m validation.cappuccino.fit --fit``);
* group ``cappuccino-predictions`` (held out, nothing fitted to them): the
  imprecise column, and the SqueezeNet energy ratio of the single-threaded
  program over Cappuccino.
"""

from __future__ import annotations

from functools import lru_cache

from simulator.checks import check
from validation.cappuccino import fit as calibration
from validation.cappuccino import refs

CALIBRATION_TOLERANCE = 15.0
PREDICTION_TOLERANCE = 50.0
FITTED_MODES = ("baseline", "parallel")


def _register() -> None:
    for model, row in refs.NEXUS5_MS.items():
        for mode, ms in zip(refs.MODES, row):
            fitted = mode in FITTED_MODES
            check(f"cappuccino.nexus5.{model}.{mode}", reference=ms, unit="ms",
                  tolerance_pct=CALIBRATION_TOLERANCE if fitted else PREDICTION_TOLERANCE,
                  source=refs.SOURCE + (f", {mode} column (fitted)" if fitted else
                                        f", {mode} column (held out)"),
                  group="cappuccino" if fitted else "cappuccino-predictions",
                  status="calibration" if fitted else "prediction",
                  )(lambda m=model, md=mode: calibration.latency_ms(refs.SOC, m, md))


_register()


@lru_cache(maxsize=None)
def _energy_j(mode: str) -> float:
    return calibration.run(refs.SOC, "squeezenet1_0", mode).metrics["energy_j"]


@check("cappuccino.nexus5.squeezenet1_0.energy_ratio",
       reference=refs.ENERGY_SINGLE_J / refs.ENERGY_CAPPUCCINO_J, unit="x",
       tolerance_pct=PREDICTION_TOLERANCE,
       source=refs.SOURCE + ", SqueezeNet energy, single-threaded / Cappuccino (exact mode)",
       group="cappuccino-predictions", status="prediction")
def _energy_ratio() -> float:
    return _energy_j("baseline") / _energy_j("parallel")
