"""Fitting, cross-validation and engine tables."""

from __future__ import annotations

import numpy as np
import pandas as pd

from simulator.library import load_soc
from simulator.spec.soc import SocSpec
from simulator.trace import Trace
from validation.pixel4.data import SOC, TARGETS, Calibration, Config
from validation.pixel4.fast_model import FastCase
from validation.pixel4.params import PARAM_NAMES, PARAMS, apply_params


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
    thermal governor off), as :func:`validation.micro.run_trace`."""
    from simulator.engine.simulation import simulate
    from simulator.spec.experiment import ExperimentSpec

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


