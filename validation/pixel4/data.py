"""The Pixel 4 calibration data: targets, configurations, loading."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pandas as pd

from simulator.trace import Trace
from validation.data import DataMissing, data_folder  # noqa: F401  (re-exported)
from validation.fitting.fast import Setting

SOC = "snapdragon855"
SOURCE = ("Li, Paolieri, Golubchik, 'A Benchmark for ML Inference Latency on Mobile Devices', "
          "EdgeSys 2024 (github.com/qed-usc/mobile-ml-benchmark): TFLite on a Pixel 4 "
          "(Snapdragon 855), 30-model calibration subset")
E2E_FILE = "pixel4_e2e_calibration.csv"
OPS_FILE = "pixel4_ops_calibration.csv"
TARGET_PCT = 15.0


@dataclass(frozen=True)
class Config:
    """One measured configuration: a data column and how to run it."""

    name: str
    column: str  # e.g. "pixel4|1large|float|mean" (microseconds)
    processor: str
    cores: int
    precision: str

    @property
    def setting(self) -> Setting:
        """How the fitting engine runs it (top OPP, one operator at a time)."""
        return Setting(self.processor, self.cores, self.precision)


def _config(label: str, precision: str, processor: str, cores: int) -> Config:
    tag = {"fp32": "float", "int8": "quant"}[precision]
    return Config(f"{precision}.{label}", f"pixel4|{label}|{tag}|mean", processor, cores,
                  precision)


TARGETS = [
    _config("1large", "fp32", "cpu.prime", 1),
    _config("1med", "fp32", "cpu.gold", 1),
    _config("3med", "fp32", "cpu.gold", 3),
    _config("1small", "fp32", "cpu.silver", 1),
    _config("4small", "fp32", "cpu.silver", 4),
    _config("gpu", "fp32", "gpu", 1),
    _config("1large", "int8", "cpu.prime", 1),
    _config("4small", "int8", "cpu.silver", 4),
]
# Measured too, not targets: reported for information (not fitted).
EXTRAS = [
    _config("2med", "fp32", "cpu.gold", 2),
    _config("2small", "fp32", "cpu.silver", 2),
    _config("3small", "fp32", "cpu.silver", 3),
    _config("1med", "int8", "cpu.gold", 1),
    _config("2med", "int8", "cpu.gold", 2),
    _config("3med", "int8", "cpu.gold", 3),
    _config("1small", "int8", "cpu.silver", 1),
    _config("2small", "int8", "cpu.silver", 2),
    _config("3small", "int8", "cpu.silver", 3),
]
CONFIGS = {c.name: c for c in TARGETS + EXTRAS}


# -- data ---------------------------------------------------------------------
def data_dir(path: str | Path | None = None) -> Path:
    """The mobile-ml-benchmark folder: ``path``, else ``$SOCSIM_DATA_DIR``, else
    ``<repo>/../shared/data`` (each may be the data root or the folder itself).

    Raises:
        DataMissing: the calibration files are not there.
    """
    return data_folder("mobile-ml-benchmark", (E2E_FILE, OPS_FILE), path)


@dataclass
class Calibration:
    """The calibration set: traces per precision and measured latencies.

    Attributes:
        models: model names in file order.
        traces: ``{precision: {model: Trace}}`` (fp32 and int8 imports).
        measured: seconds, one row per model, one column per config name.
        grouped: models with a grouped convolution (left out of CPU fits).
        ops: the operator table with per-op GPU latencies (seconds).
    """

    models: list[str]
    traces: dict[str, dict[str, Trace]]
    measured: pd.DataFrame
    grouped: frozenset[str]
    ops: pd.DataFrame


@lru_cache(maxsize=4)
def _load(folder: str) -> Calibration:
    from workloads.importers.mobile_ml_benchmark import import_mobile_ml_benchmark

    folder = Path(folder)
    traces = {p: import_mobile_ml_benchmark(folder / OPS_FILE, None, precision=p)
              for p in ("fp32", "int8")}
    e2e = pd.read_csv(folder / E2E_FILE).set_index("model")
    models = [m for m in traces["fp32"] if m in e2e.index]
    measured = pd.DataFrame({c.name: e2e.loc[models, c.column] * 1e-6
                             for c in CONFIGS.values() if c.column in e2e.columns})
    grouped = frozenset(m for m in models if (traces["fp32"][m].table["op"] == "group_conv").any())
    ops = pd.read_csv(folder / OPS_FILE)
    return Calibration(models, traces, measured, grouped, ops)


def load(path: str | Path | None = None) -> Calibration:
    """Load (and cache) the calibration set. Raises :class:`DataMissing`."""
    return _load(str(data_dir(path)))


