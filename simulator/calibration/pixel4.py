"""Fit the Snapdragon 855 (Pixel 4) to the mobile-ml-benchmark calibration set.

Data: "A Benchmark for ML Inference Latency on Mobile Devices" (Li, Paolieri,
Golubchik, EdgeSys 2024; github.com/qed-usc/mobile-ml-benchmark): TFLite
end-to-end latency of 30 CNNs on a Pixel 4 (the calibration subset; 72 more
are held out), read from ``$SOCSIM_DATA_DIR/mobile-ml-benchmark`` (default
``<repo>/../shared/data``). Nothing from the data is copied into the repository.

Each model's operator list is imported with the project's importer and run with
the ``single`` policy, exactly as the held-out checks will do, on eight target
configurations (:data:`TARGETS`): FP32 on 1 prime A76 (``1large``), 1 and 3 gold
A76 (``1med``, ``3med``), 1 and 4 A55 (``1small``, ``4small``) and the Adreno 640
through the TFLite GPU delegate (``gpu``); INT8 on ``1large`` and ``4small``.

Fitted parameters (:data:`PARAMS`, 14 numbers, all per processor and precision,
none per model):

* compute efficiency of ``conv`` and ``dwconv``, FP32 and INT8, for the A76
  (prime and gold share the core and its table) and the A55, and of ``conv``
  for the GPU;
* the per-operator fixed cost (``dispatch_overhead``): A76 in core cycles
  (so prime and gold get the same cycles at their own clocks), A55 and GPU in
  seconds;
* ``parallel_efficiency`` of the gold and silver clusters.

Everything else (peaks, clocks, caches, memory bandwidths) stays at the
hardware facts. The GPU ``dwconv`` efficiency is not identifiable from
end-to-end latency (the cost model makes those layers memory-bound on the GPU);
it is read off the per-operator GPU latencies instead (:func:`gpu_dwconv_from_ops`).

Models with grouped convolutions (a ``conv`` row with ``groups > 1``) are left
out of the CPU fits: TFLite runs them with an unoptimised single-threaded
kernel (about 2 GFLOP/s on an A76 whatever the thread count) that the efficiency
tables, keyed by op kind, cannot tell from an ordinary convolution. They stay in
the GPU fit and in every reported table.

The fit minimises the sum of squared log errors with ``scipy.optimize.least_squares``
from fixed starting values, so it is deterministic. A fast vectorised copy of
the cost model (:class:`FastCase`) is used while fitting; it reproduces the
engine's latency exactly (including branches running concurrently on idle cores
of a cluster), which :func:`check_fast_model` verifies. Reported tables come from
the engine.

Run::

    python -m simulator.calibration.pixel4 [--data DIR]         # table (engine)
    python -m simulator.calibration.pixel4 --fit [--cv 10]      # fit, CV, table
"""

from __future__ import annotations

import argparse
import math
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from ..hardware.cost import lookup, memory_levels
from ..library import PROJECT_ROOT, load_soc
from ..ops import OP_KINDS
from ..spec.soc import SocSpec
from ..trace import Trace

SOC = "snapdragon855"
SOURCE = ("Li, Paolieri, Golubchik, 'A Benchmark for ML Inference Latency on Mobile Devices', "
          "EdgeSys 2024 (github.com/qed-usc/mobile-ml-benchmark): TFLite on a Pixel 4 "
          "(Snapdragon 855), 30-model calibration subset")
E2E_FILE = "pixel4_e2e_calibration.csv"
OPS_FILE = "pixel4_ops_calibration.csv"
TARGET_PCT = 15.0


class DataMissing(FileNotFoundError):
    """The mobile-ml-benchmark calibration files are not on this machine."""


@dataclass(frozen=True)
class Config:
    """One measured configuration: a data column and how to run it."""

    name: str
    column: str  # e.g. "pixel4|1large|float|mean" (microseconds)
    processor: str
    cores: int
    precision: str

    @property
    def policy(self) -> dict:
        return {"name": "single", "processor": self.processor, "cores": self.cores}


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
    root = Path(path or os.environ.get("SOCSIM_DATA_DIR") or
                PROJECT_ROOT.parent / "shared" / "data")
    for folder in (root / "mobile-ml-benchmark", root):
        if (folder / E2E_FILE).is_file() and (folder / OPS_FILE).is_file():
            return folder
    raise DataMissing(f"{E2E_FILE} / {OPS_FILE} not found under {root} "
                      "(set SOCSIM_DATA_DIR or --data)")


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
    grouped = frozenset(m for m in models if (
        (traces["fp32"][m].table["op"] == "conv") & (traces["fp32"][m].table["groups"] > 1)).any())
    ops = pd.read_csv(folder / OPS_FILE)
    return Calibration(models, traces, measured, grouped, ops)


def load(path: str | Path | None = None) -> Calibration:
    """Load (and cache) the calibration set. Raises :class:`DataMissing`."""
    return _load(str(data_dir(path)))


# -- the fast cost model --------------------------------------------------------
class FastCase:
    """One model on one configuration, with the cost model vectorised.

    Everything that does not depend on fitted parameters (the bytes each memory
    level serves, which depend only on capacities) is computed once; latency
    then follows :mod:`simulator.hardware.cost` kernel by kernel: the ``single``
    policy runs one operator at a time, so latency is the sum of kernel times
    plus, on an accelerator with its own address space, uploading the input
    and downloading the output (see :mod:`simulator.engine.job_runner`).
    """

    def __init__(self, soc: SocSpec, trace: Trace, config: Config):
        self.config = config
        proc = soc.processors()[config.processor]
        table = trace.table
        ops = table["op"].tolist()
        self.kinds = sorted(set(ops))
        self.kind_index = np.array([self.kinds.index(op) for op in ops])
        self.precision = config.precision
        self.flops = table["flops"].to_numpy(float)
        bytes_in, bytes_out, weights = (table[c].to_numpy(float)
                                        for c in ("bytes_in", "bytes_out", "weight_bytes"))
        kernel = table["kernel"].fillna(0).to_numpy(float)
        stride = table["stride"].fillna(0).to_numpy(float)
        windowed = np.array([OP_KINDS[op].window_reuse for op in ops]) & (kernel > 0)
        reuse = np.ones(len(table))
        reuse[windowed] = np.maximum(1.0, (kernel[windowed] / np.maximum(stride[windowed], 1))
                                     ** 2)
        activations = bytes_in + bytes_out
        footprint = activations + weights
        accesses = reuse * bytes_in + bytes_out + weights
        self.capacities = []
        self.served = []
        served = accesses
        for level in memory_levels(soc, proc, config.cores):
            self.capacities.append(level.capacity)
            self.served.append(served)
            if math.isinf(level.capacity):
                break
            beyond = (weights + activations * _miss(activations, level.capacity)
                      + (accesses - footprint) * _miss(footprint, level.capacity))
            served = np.minimum(served, beyond)
        # host I/O bytes: inputs of the first kernels, outputs of the last ones
        self.io_bytes = (sum(bytes_in[r] for r, p in enumerate(trace.preds) if not p)
                         + sum(bytes_out[r] for r, s in enumerate(trace.succs) if not s))
        self.io_transfers = (sum(1 for p in trace.preds if not p)
                             + sum(1 for s in trace.succs if not s))

    def durations(self, soc: SocSpec) -> np.ndarray:
        """Seconds of every kernel alone at the top OPP."""
        proc = soc.processors()[self.config.processor]
        units = max(1, min(self.config.cores, proc.units))
        efficiency = np.array([lookup(proc.efficiency, self.precision, k, "fwd")
                               for k in self.kinds])[self.kind_index]
        mem_eff = np.array([lookup(proc.memory_efficiency, self.precision, k, "fwd")
                            for k in self.kinds])[self.kind_index]
        scale = 1.0 + (units - 1) * proc.parallel_efficiency
        cycles = self.flops / (proc.ops_per_cycle[self.precision] * efficiency * scale)
        fixed = np.zeros_like(cycles)
        levels = memory_levels(soc, proc, units)
        for level, served in zip(levels, self.served):
            if level.bytes_per_cycle is not None:
                cycles = np.maximum(cycles, served / (level.bytes_per_cycle * mem_eff))
            else:
                fixed = np.maximum(fixed, served / (level.bandwidth * mem_eff))
        return np.maximum(cycles / proc.opps[-1].frequency, fixed) + proc.dispatch_overhead

    def latency(self, soc: SocSpec) -> float:
        """End-to-end seconds of one inference."""
        total = float(self.durations(soc).sum())
        offload = soc.processors()[self.config.processor].offload
        if offload is not None:
            total += self.io_transfers * offload.switch + self.io_bytes / offload.bandwidth
        return total


def _miss(working_set: np.ndarray, capacity: float) -> np.ndarray:
    return np.where(working_set > capacity, 1.0 - capacity / np.maximum(working_set, 1e-300),
                    0.0)


# -- parameters -----------------------------------------------------------------
CLUSTERS = {"a76": ("prime", "gold"), "a55": ("silver",)}


@dataclass(frozen=True)
class Param:
    """A fitted parameter. ``name``: ``<core>.<precision>.<op>`` (efficiency),
    ``<core>.dispatch`` (per-op cost) or ``<cluster>.parallel``."""

    name: str
    start: float
    unit: str  # "" (fraction), "kcycles", "us"
    description: str

    @property
    def bounded(self) -> bool:
        """Fractions are capped at 1."""
        return self.unit == ""


PARAMS = [
    Param("a76.fp32.conv", 0.6, "", "A76 FP32 convolution efficiency (prime and gold)"),
    Param("a76.fp32.dwconv", 0.2, "", "A76 FP32 depthwise convolution efficiency"),
    Param("a76.int8.conv", 0.5, "", "A76 INT8 (SDOT) convolution efficiency"),
    Param("a76.int8.dwconv", 0.05, "", "A76 INT8 depthwise convolution efficiency"),
    Param("a55.fp32.conv", 0.5, "", "A55 FP32 convolution efficiency"),
    Param("a55.fp32.dwconv", 0.1, "", "A55 FP32 depthwise convolution efficiency"),
    Param("a55.int8.conv", 0.4, "", "A55 INT8 convolution efficiency"),
    Param("a55.int8.dwconv", 0.05, "", "A55 INT8 depthwise convolution efficiency"),
    Param("gpu.fp32.conv", 0.25, "", "Adreno 640 convolution efficiency"),
    Param("a76.dispatch", 100.0, "kcycles", "A76 per-operator fixed cost (core cycles)"),
    Param("a55.dispatch", 200.0, "us", "A55 per-operator fixed cost"),
    Param("gpu.offload", 300.0, "us", "GPU delegate per-transfer cost (input upload, output "
          "download)"),
    Param("gold.parallel", 0.7, "", "gold cluster parallel efficiency"),
    Param("silver.parallel", 0.9, "", "silver cluster parallel efficiency"),
]
PARAM_NAMES = [p.name for p in PARAMS]
# Read off the per-op GPU latencies instead of fitted end to end (see gpu_dwconv_from_ops).
DERIVED = ["gpu.fp32.dwconv"]


def _set_efficiency(table: dict, precision: str, op: str, value: float) -> dict:
    table = dict(table)
    if precision == "fp32":
        table[op] = value
    else:
        nested = dict(table.get(precision) or {})
        nested[op] = value
        table[precision] = nested
    return table


def apply_params(soc: SocSpec, values: dict[str, float]) -> SocSpec:
    """A copy of ``soc`` with fitted ``values`` (names of :data:`PARAMS`) in place."""
    processors = {f"cpu.{n}": p for n, p in soc.cpu.items()}
    processors["gpu"] = soc.gpu
    updates: dict[str, dict] = {name: {} for name in processors}

    def eff(name: str) -> dict:
        return updates[name].get("efficiency", processors[name].efficiency)

    for name, value in values.items():
        parts = name.split(".")
        core = parts[0]
        targets = ([f"cpu.{c}" for c in CLUSTERS[core]] if core in CLUSTERS
                   else ["gpu"] if core == "gpu" else [f"cpu.{core}"])
        for target in targets:
            if len(parts) == 3:
                updates[target]["efficiency"] = _set_efficiency(eff(target), parts[1], parts[2],
                                                                value)
            elif parts[1] == "dispatch":
                spec = processors[target]
                updates[target]["dispatch_overhead"] = (
                    value * 1e3 / spec.opps[-1].frequency if core == "a76" else value * 1e-6)
            elif parts[1] == "parallel":
                updates[target]["parallel_efficiency"] = value
            elif parts[1] == "offload":
                updates[target]["offload"] = processors[target].offload.model_copy(
                    update={"switch": value * 1e-6})
            else:
                raise KeyError(f"unknown parameter {name!r}")
    cpu = {n: p.model_copy(update=updates[f"cpu.{n}"]) for n, p in soc.cpu.items()}
    return soc.model_copy(update={"cpu": cpu, "gpu": soc.gpu.model_copy(update=updates["gpu"])})


def read_params(soc: SocSpec) -> dict[str, float]:
    """The current values of :data:`PARAMS` and :data:`DERIVED` in ``soc`` (the
    inverse of :func:`apply_params`)."""
    out = {}
    for name in PARAM_NAMES + DERIVED:
        parts = name.split(".")
        core = parts[0]
        proc = (soc.cpu[CLUSTERS[core][-1]] if core in CLUSTERS else
                soc.gpu if core == "gpu" else soc.cpu[core])
        if len(parts) == 3:
            out[name] = lookup(proc.efficiency, parts[1], parts[2], "fwd")
        elif parts[1] == "dispatch":
            out[name] = (proc.dispatch_overhead * proc.opps[-1].frequency / 1e3
                         if core == "a76" else proc.dispatch_overhead * 1e6)
        elif parts[1] == "offload":
            out[name] = proc.offload.switch * 1e6
        else:
            out[name] = proc.parallel_efficiency
    return out


# -- fitting --------------------------------------------------------------------
class Fitter:
    """Fast cases for every (model, target config) of a calibration set."""

    def __init__(self, cal: Calibration, soc: SocSpec | None = None,
                 configs: list[Config] | None = None):
        self.cal = cal
        soc = soc or load_soc(SOC)
        self.derived = {"gpu.fp32.dwconv": gpu_dwconv_from_ops(cal, soc)}
        self.soc = apply_params(soc, self.derived)  # the base every fit starts from
        self.configs = configs or TARGETS
        self.cases = {(m, c.name): FastCase(self.soc, cal.traces[c.precision][m], c)
                      for m in cal.models for c in self.configs}

    def keys(self, models: list[str] | None = None) -> list[tuple[str, str]]:
        """(model, config) pairs that enter the fit: CPU configs skip grouped-conv models."""
        models = self.cal.models if models is None else models
        return [(m, c.name) for m in models for c in self.configs
                if c.processor == "gpu" or m not in self.cal.grouped]

    def predict(self, soc: SocSpec, keys) -> np.ndarray:
        return np.array([self.cases[k].latency(soc) for k in keys])

    def fit(self, models: list[str] | None = None) -> dict[str, float]:
        """Least squares on log(simulated / measured) from :data:`PARAMS` starts."""
        from scipy.optimize import least_squares

        keys = self.keys(models)
        measured = np.array([self.cal.measured.at[m, c] for m, c in keys])
        upper = np.array([0.0 if p.bounded else np.inf for p in PARAMS])
        start = np.minimum(np.log([p.start for p in PARAMS]), upper - 1e-6)

        def residuals(x: np.ndarray) -> np.ndarray:
            soc = apply_params(self.soc, dict(zip(PARAM_NAMES, np.exp(x))))
            return np.log(self.predict(soc, keys) / measured)

        result = least_squares(residuals, start, bounds=(np.full(len(PARAMS), -np.inf), upper),
                               diff_step=1e-4)
        return {**dict(zip(PARAM_NAMES, np.exp(result.x))), **self.derived}

    def errors(self, soc: SocSpec, models: list[str] | None = None) -> pd.DataFrame:
        """Signed % error per model (rows) and config (columns), fast model."""
        models = self.cal.models if models is None else models
        return pd.DataFrame({c.name: [(self.cases[(m, c.name)].latency(soc)
                                       / self.cal.measured.at[m, c.name] - 1) * 100
                                      for m in models] for c in self.configs}, index=models)


def cross_validate(cal: Calibration, splits: int = 10, test_size: int = 10, seed: int = 0,
                   fitter: Fitter | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Repeated random splits: fit on ``len(models) - test_size`` models, evaluate on the rest.

    Returns:
        (summary of the pooled held-out errors per config, fitted parameters per split).
    """
    fitter = fitter or Fitter(cal)
    rng = np.random.default_rng(seed)
    pooled, fits = [], []
    for _ in range(splits):
        order = rng.permutation(len(cal.models))
        test = [cal.models[i] for i in order[:test_size]]
        train = [cal.models[i] for i in order[test_size:]]
        values = fitter.fit(train)
        fits.append(values)
        pooled.append(fitter.errors(apply_params(fitter.soc, values), test))
    return summarize(pd.concat(pooled)), pd.DataFrame(fits)


def gpu_dwconv_from_ops(cal: Calibration, soc: SocSpec | None = None,
                        min_outputs: float = 1e5) -> float:
    """GPU depthwise-conv efficiency from the per-op GPU latencies: median throughput
    of the large depthwise layers (``min_outputs`` output elements or more) over
    the FP32 peak at the top OPP."""
    soc = soc or load_soc(SOC)
    rows = []
    for model in cal.models:
        table = cal.traces["fp32"][model].table
        measured = cal.ops.loc[cal.ops["model"] == model, "pixel4|gpu|float"].to_numpy(float)
        if len(measured) != len(table):
            continue
        large = (table["op"] == "dwconv").to_numpy() & (table["bytes_out"].to_numpy() / 4
                                                        >= min_outputs)
        rows.append(table["flops"].to_numpy(float)[large] / (measured[large] * 1e-6))
    peak = soc.gpu.ops_per_cycle["fp32"] * soc.gpu.opps[-1].frequency
    return float(np.median(np.concatenate(rows)) / peak)


# -- engine tables --------------------------------------------------------------
def engine_latency(soc: SocSpec | str, trace: Trace, config: Config) -> float:
    """Seconds of one inference through the full engine (performance governor,
    thermal governor off), as :func:`simulator.validation.micro.run_trace`."""
    from ..engine.simulation import simulate
    from ..spec.experiment import ExperimentSpec

    name = soc if isinstance(soc, str) else soc.name
    spec = ExperimentSpec.model_validate({
        "name": "pixel4-calibration", "soc": name, "workload": {"trace": "<memory>"},
        "policy": config.policy, "dvfs": {"governor": "performance"},
        "thermal": {"governor": False}, "outputs": {"timeline": False}})
    result = simulate(spec, traces={0: trace}, soc=None if isinstance(soc, str) else soc)
    return float(result.metrics["latency_s"])


def engine_table(cal: Calibration, soc: SocSpec | str = SOC,
                 configs: list[Config] | None = None) -> pd.DataFrame:
    """Simulated seconds per model (rows) and config (columns)."""
    configs = configs or TARGETS
    return pd.DataFrame({c.name: [engine_latency(soc, cal.traces[c.precision][m], c)
                                  for m in cal.models] for c in configs}, index=cal.models)


def error_table(cal: Calibration, simulated: pd.DataFrame) -> pd.DataFrame:
    """Signed % errors of ``simulated`` against the measurements."""
    return (simulated / cal.measured.loc[simulated.index, simulated.columns] - 1) * 100


def summarize(errors: pd.DataFrame) -> pd.DataFrame:
    """Per config: median |error| %, share within 10 % and 20 %, median signed error %."""
    rows = {}
    for name in errors.columns:
        e = errors[name].dropna().to_numpy()
        rows[name] = {"median_abs_pct": float(np.median(np.abs(e))),
                      "within10_pct": float(np.mean(np.abs(e) <= 10) * 100),
                      "within20_pct": float(np.mean(np.abs(e) <= 20) * 100),
                      "median_pct": float(np.median(e)), "n": len(e)}
    return pd.DataFrame(rows).T


def check_fast_model(cal: Calibration, soc: SocSpec, models: list[str] | None = None) -> float:
    """Largest relative difference between the fast model and the engine."""
    models = models or cal.models[:: max(1, len(cal.models) // 5)]
    fitter = Fitter(cal, soc, TARGETS)
    worst = 0.0
    for model in models:
        for config in TARGETS:
            fast = fitter.cases[(model, config.name)].latency(soc)
            engine = engine_latency(soc, cal.traces[config.precision][model], config)
            worst = max(worst, abs(fast / engine - 1))
    return worst


# -- command line ---------------------------------------------------------------
def _format_params(values: dict[str, float], current: dict[str, float] | None = None) -> str:
    lines = []
    described = [(p.name, p.unit, p.description) for p in PARAMS] + [
        ("gpu.fp32.dwconv", "", "Adreno 640 depthwise efficiency, from the per-op GPU "
         "latencies (not fitted end to end)")]
    for name, unit, description in described:
        now = f"(now {current[name]:.4g})" if current else ""
        lines.append(f"  {name:18s} {values[name]:10.4g} {unit:8s}{now:14s} {description}")
    return "\n".join(lines)


def _print_summary(title: str, summary: pd.DataFrame) -> None:
    print(title)
    print(f"  {'config':14s} {'median|err|':>11s} {'<=10%':>7s} {'<=20%':>7s} "
          f"{'median err':>10s}  target")
    for name, row in summary.iterrows():
        target = ""
        if name in {c.name for c in TARGETS}:
            target = "ok" if row["median_abs_pct"] <= TARGET_PCT else "MISSED"
        print(f"  {name:14s} {row['median_abs_pct']:10.1f}% {row['within10_pct']:6.0f}% "
              f"{row['within20_pct']:6.0f}% {row['median_pct']:+9.1f}%  {target}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m simulator.calibration.pixel4",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", help="data folder (default $SOCSIM_DATA_DIR or "
                        "<repo>/../shared/data)")
    parser.add_argument("--fit", action="store_true", help="fit and print proposed parameters")
    parser.add_argument("--cv", type=int, default=10, metavar="N",
                        help="with --fit: N random 20/10 cross-validation splits (0: none)")
    parser.add_argument("--extras", action="store_true",
                        help="also report the measured configurations that are not targets")
    parser.add_argument("--per-model", action="store_true", help="print per-model errors")
    args = parser.parse_args(argv)
    try:
        cal = load(args.data)
    except DataMissing as err:
        print(f"skipped: {err}")
        return 0
    soc = load_soc(SOC)
    print(f"{len(cal.models)} models; grouped-conv models (not in CPU fits): "
          f"{', '.join(sorted(cal.grouped))}")
    if args.fit:
        fitter = Fitter(cal, soc)
        values = fitter.fit()
        print("\nProposed parameters (fit on all calibration models):")
        print(_format_params(values, read_params(soc)))
        fitted = apply_params(soc, values)
        print(f"\nfast model vs engine, largest difference: "
              f"{check_fast_model(cal, fitted) * 100:.2g} %")
        _print_summary("\nCalibration with the proposed parameters (fast model):",
                       summarize(fitter.errors(fitted)))
        if args.cv:
            summary, fits = cross_validate(cal, splits=args.cv, fitter=fitter)
            _print_summary(f"\nCross-validation ({args.cv} random splits, fit on "
                           f"{len(cal.models) - 10} models, errors on the other 10, pooled):",
                           summary)
            print("\nParameter spread over the splits (min / median / max):")
            for name in PARAM_NAMES:
                col = fits[name]
                print(f"  {name:18s} {col.min():9.4g} {col.median():9.4g} {col.max():9.4g}")
    configs = TARGETS + (EXTRAS if args.extras else [])
    configs = [c for c in configs if c.name in cal.measured.columns]
    errors = error_table(cal, engine_table(cal, soc, configs))
    _print_summary(f"\nCalibration table ({SOC}.yaml as committed, full engine):",
                   summarize(errors))
    if args.per_model:
        print(errors.round(1).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
