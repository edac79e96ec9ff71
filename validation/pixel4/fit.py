"""Fitting, cross-validation and engine tables."""

from __future__ import annotations

import numpy as np
import pandas as pd

from simulator.library import load_soc
from simulator.spec.soc import SocSpec
from simulator.trace import Trace
from validation.fitting import least_squares_log
from validation.pixel4.data import CONFIGS, SOC, TARGETS, Calibration, Config
from validation.pixel4.fast_model import FastCase
from validation.pixel4.params import GPU_PARAMS, PARAM_NAMES, PARAMS, apply_params


class Fitter:
    """Fast cases for every (model, target config) of a calibration set."""

    def __init__(self, cal: Calibration, soc: SocSpec | None = None,
                 configs: list[Config] | None = None):
        self.cal = cal
        soc = soc or load_soc(SOC)
        self.derived = fit_gpu_ops(cal, soc)
        self.soc = apply_params(soc, self.derived)  # the base every fit starts from
        self.configs = configs or fit_configs(cal)
        self.cases = {(m, c.name): FastCase(self.soc, cal.traces[c.precision][m], c)
                      for m in cal.models for c in self.configs}

    def keys(self, models: list[str] | None = None) -> list[tuple[str, str]]:
        """(model, config) pairs that enter the fit: every model on every config."""
        models = self.cal.models if models is None else models
        return [(m, c.name) for m in models for c in self.configs]

    def predict(self, soc: SocSpec, keys) -> np.ndarray:
        return np.array([self.cases[k].latency(soc) for k in keys])

    def fit(self, models: list[str] | None = None) -> dict[str, float]:
        """Least squares on log(simulated / measured) from :data:`PARAMS` starts
        (:func:`validation.fitting.least_squares_log`)."""
        keys = self.keys(models)
        derived = self.derived if models is None else fit_gpu_ops(self.cal, self.soc, models)
        base = self.soc if models is None else apply_params(self.soc, derived)
        measured = np.array([self.cal.measured.at[m, c] for m, c in keys])

        def residuals(values: np.ndarray) -> np.ndarray:
            soc = apply_params(base, dict(zip(PARAM_NAMES, values)))
            return np.log(self.predict(soc, keys) / measured)

        values = least_squares_log(residuals, [p.start for p in PARAMS], *_bounds(PARAMS))
        return {**dict(zip(PARAM_NAMES, values)), **derived}

    def errors(self, soc: SocSpec, models: list[str] | None = None) -> pd.DataFrame:
        """Signed % error per model (rows) and config (columns), fast model."""
        models = self.cal.models if models is None else models
        return pd.DataFrame({c.name: [(self.cases[(m, c.name)].latency(soc)
                                       / self.cal.measured.at[m, c.name] - 1) * 100
                                      for m in models] for c in self.configs}, index=models)


def fit_configs(cal: Calibration) -> list[Config]:
    """The configurations the fit uses: every measured one (targets and the others)."""
    return [c for c in CONFIGS.values() if c.name in cal.measured.columns]


def folds(models: list[str], k: int = 5, seed: int = 0) -> list[list[str]]:
    """``k`` disjoint folds of ``models`` (a seeded permutation dealt round-robin)."""
    order = np.random.default_rng(seed).permutation(len(models))
    return [[models[i] for i in sorted(order[f::k])] for f in range(k)]


def cross_validate(cal: Calibration, k: int = 5, seed: int = 0,
                   fitter: Fitter | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``k``-fold cross-validation: fit on the other folds, predict each fold's models.

    Every model is predicted exactly once, by a fit that never saw it.

    Returns:
        (signed % errors per model and config, fitted parameters per fold).
    """
    fitter = fitter or Fitter(cal)
    pooled, fits = [], []
    for test in folds(cal.models, k, seed):
        train = [m for m in cal.models if m not in test]
        values = fitter.fit(train)
        fits.append(values)
        pooled.append(fitter.errors(apply_params(fitter.soc, values), test))
    return pd.concat(pooled).loc[cal.models], pd.DataFrame(fits)


def fit_gpu_ops(cal: Calibration, soc: SocSpec | None = None,
                models: list[str] | None = None) -> dict[str, float]:
    """The Adreno 640's kernel classes (:data:`GPU_PARAMS`) fitted to the per-op GPU
    latencies of ``models`` (default: the calibration set): least squares on
    log(simulated / measured) over every listed operator, each costed by the cost
    model alone (top OPP)."""
    soc = soc or load_soc(SOC)
    gpu = Config("gpu-ops", "", "gpu", 1, "fp32")
    cases, measured = [], []
    for model in cal.models if models is None else models:
        latencies = cal.ops.loc[cal.ops["model"] == model, "pixel4|gpu|float"].to_numpy(float)
        if len(latencies) == len(cal.traces["fp32"][model].table):
            cases.append(FastCase(soc, cal.traces["fp32"][model], gpu))
            measured.append(latencies * 1e-6)
    measured = np.concatenate(measured)
    names = [p.name for p in GPU_PARAMS]

    def residuals(values: np.ndarray) -> np.ndarray:
        fitted = apply_params(soc, dict(zip(names, values)))
        return np.log(np.concatenate([c.durations(fitted) for c in cases]) / measured)

    return dict(zip(names, least_squares_log(residuals, [p.start for p in GPU_PARAMS],
                                             *_bounds(GPU_PARAMS))))


def _bounds(params) -> tuple[list[float], list[float]]:
    """Fractions in (0, 1], everything else positive."""
    return [0.0] * len(params), [1.0 if p.bounded else np.inf for p in params]


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


