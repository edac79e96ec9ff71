"""Pixel 4 (Snapdragon 855): end-to-end TFLite latency of the mobile-ml-benchmark models.

One check per target configuration (FP32 ``1large``, ``1med``, ``3med``,
``1small``, ``4small``, ``gpu``; INT8 ``1large``, ``4small``): the simulated
value is the median |error| in percent over the 30 calibration models, each
imported with the project's importer and run through the engine with the
``single`` policy; the reference is the 15 % target (kind ``max``). The fit
uses every measured configuration; the within-10 % fractions on the calibration
set and by 5-fold cross-validation are printed by ``python -m validation.pixel4
--fit --extras`` and tabled in ``docs/calibration.md``. The data
stays outside the repository (``$SOCSIM_DATA_DIR``, default ``../shared/data``);
without it the checks are skipped. The 8 checks share one simulation pass.
See :mod:`validation.pixel4` and ``docs/calibration.md``.
"""

from __future__ import annotations

from functools import lru_cache

import pandas as pd

from simulator.checks import DataUnavailable, check
from simulator.library import soc_path
from validation import pixel4

SOURCE = ("Li, Paolieri, Golubchik, 'A Benchmark for ML Inference Latency on Mobile Devices', "
          "EdgeSys 2024 (github.com/qed-usc/mobile-ml-benchmark): TFLite on a Pixel 4 "
          "(Snapdragon 855), 30-model calibration set; median |error| over the models")


@lru_cache(maxsize=4)
def _errors_for(folder: str, soc_file: str, soc_mtime: int) -> pd.DataFrame:
    cal = pixel4.load(folder)
    return pixel4.error_table(cal, pixel4.engine_table(cal, soc_file))


def pixel4_errors() -> pd.DataFrame:
    """Signed % error per calibration model (rows) and target config (columns),
    simulated once per data folder and SoC file version."""
    try:
        folder = pixel4.data_dir()
    except pixel4.DataMissing as err:
        raise DataUnavailable(str(err)) from None
    path = soc_path(pixel4.SOC)
    return _errors_for(str(folder), str(path), path.stat().st_mtime_ns)


def median_abs_error(config: str) -> float:
    """Median |error| (%) of one target configuration over the calibration models."""
    return float(pixel4_errors()[config].abs().median())


def _register() -> None:
    for config in pixel4.TARGETS:
        check(f"pixel4.{config.name}.median_abs_error", reference=pixel4.TARGET_PCT,
              unit="%", tolerance_pct=0.0, kind="max", group="workloads",
              status="calibration",  # fitted: validation.pixel4.fit fits every measured config
              source=f"{SOURCE}, {config.column.split('|')[1]} {config.precision}")(
            lambda name=config.name: median_abs_error(name))


_register()
