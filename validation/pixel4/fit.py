"""The study's fit (fixed starts, GPU kernel classes first), cross-validation and engine
tables, on the fitting engine (:mod:`validation.fitting`: its fast model, parameters,
folds, summaries and engine runs)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from simulator.library import load_soc
from simulator.spec.soc import SocSpec
from validation.fitting import (
    FastCase,
    Problem,
    Row,
    Setting,
    apply,
    engine_latency,
    folds,
    least_squares_log,
)
from validation.fitting import summarize as summarize_rows
from validation.pixel4.data import CONFIGS, SOC, TARGETS, Calibration, Config
from validation.pixel4.params import (
    GPU_PARAMS,
    PARAM_NAMES,
    PARAMS,
    Base,
    apply_params,
    load_base,
    resolve,
)


class Fitter:
    """The fitting engine's :class:`~validation.fitting.Problem` over every (model,
    config) of a calibration set, fitted the study's way (:meth:`fit`)."""

    def __init__(self, cal: Calibration, base: Base | None = None,
                 configs: list[Config] | None = None):
        self.cal = cal
        base = base or load_base()
        self.derived = fit_gpu_ops(cal, base)
        self.base = apply_params(base, self.derived)  # the base every fit starts from
        self.configs = configs or fit_configs(cal)
        rows = [Row(FastCase(self.base.soc, cal.traces[c.precision][m], c.setting), None,
                    float(cal.measured.at[m, c.name]), m, c.name)
                for m in cal.models for c in self.configs]
        self.problem = Problem(self.base.raw, self.base.soc, rows)

    def rows(self, models: list[str] | None = None) -> list[Row]:
        """The rows that enter the fit: every model (default all) on every config."""
        if models is None:
            return self.problem.rows
        chosen = set(models)
        return [r for r in self.problem.rows if r.group in chosen]

    def fit(self, models: list[str] | None = None) -> dict[str, float]:
        """Least squares on log(simulated / measured) from the fixed :data:`PARAMS`
        starts, after the GPU kernel classes (:func:`fit_gpu_ops`) on the same models.

        Not :meth:`validation.fitting.Problem.fit`, though both minimise the same sum with
        :func:`~validation.fitting.least_squares_log`, because the study's fit differs in
        what its numbers (``socs/snapdragon855.yaml``) were fitted with, which the engine's
        need not reproduce to their digits:

        * the starts are the study's fixed :data:`PARAMS` values, not the base file's
          (``Problem.start``), so a fit does not depend on the committed file it rewrites;
        * its variables are in the study's display units (``Param.scale``: kcycles, us),
          which moves the optimiser's relative finite-difference steps and stopping point,
          and its bounds are (0, 1] for fractions and (0, inf) otherwise, not the engine's
          physical ranges (``validation.fitting.params.KINDS``);
        * each fold first refits the GPU kernel classes on its own models
          (:func:`fit_gpu_ops`, per-op rows the end-to-end ``Problem`` does not fit).
        """
        rows = self.rows(models)
        derived = self.derived if models is None else fit_gpu_ops(self.cal, self.base, models)
        base = self.base if models is None else apply_params(self.base, derived)
        params, scales = resolve(PARAM_NAMES, base.soc)
        measured = np.array([r.measured for r in rows])

        def residuals(values: np.ndarray) -> np.ndarray:
            soc = apply(base.raw, base.soc, params, values * scales)[1]
            return np.log(self.problem.predict(soc, rows) / measured)

        values = least_squares_log(residuals, [p.start for p in PARAMS], *_bounds(PARAMS))
        return {**dict(zip(PARAM_NAMES, values)), **derived}

    def errors(self, soc: SocSpec, models: list[str] | None = None) -> pd.DataFrame:
        """Signed % error per model (rows) and config (columns), fast model."""
        rows = self.rows(models)
        frame = pd.DataFrame({"model": [r.group for r in rows], "config": [r.label for r in rows],
                              "error": self.problem.errors(soc, rows)})
        table = frame.pivot(index="model", columns="config", values="error")
        return table.loc[list(dict.fromkeys(frame["model"])), [c.name for c in self.configs]]


def fit_configs(cal: Calibration) -> list[Config]:
    """The configurations the fit uses: every measured one (targets and the others)."""
    return [c for c in CONFIGS.values() if c.name in cal.measured.columns]


def cross_validate(cal: Calibration, k: int = 5, seed: int = 0,
                   fitter: Fitter | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``k``-fold cross-validation (:func:`validation.fitting.folds`): fit on the other
    folds, predict each fold's models. Every model is predicted exactly once, by a fit
    that never saw it. The engine's folds, with the study's own fit (:meth:`Fitter.fit`:
    fixed starts and the GPU kernel classes refitted per fold, which
    :meth:`validation.fitting.Problem.cross_validate` does not do).

    Returns:
        (signed % errors per model and config, fitted parameters per fold).
    """
    fitter = fitter or Fitter(cal)
    pooled, fits = [], []
    for test in folds(cal.models, k, seed):
        train = [m for m in cal.models if m not in test]
        values = fitter.fit(train)
        fits.append(values)
        pooled.append(fitter.errors(apply_params(fitter.base, values).soc, test))
    return pd.concat(pooled).loc[cal.models], pd.DataFrame(fits)


def fit_gpu_ops(cal: Calibration, base: Base, models: list[str] | None = None
                ) -> dict[str, float]:
    """The Adreno 640's kernel classes (:data:`GPU_PARAMS`) fitted to the per-op GPU
    latencies of ``models`` (default: the calibration set): least squares on
    log(simulated / measured) over every listed operator, each costed by the cost
    model alone (top OPP)."""
    cases, measured = [], []
    for model in cal.models if models is None else models:
        latencies = cal.ops.loc[cal.ops["model"] == model, "pixel4|gpu|float"].to_numpy(float)
        if len(latencies) == len(cal.traces["fp32"][model].table):
            cases.append(FastCase(base.soc, cal.traces["fp32"][model], Setting("gpu")))
            measured.append(latencies * 1e-6)
    measured = np.concatenate(measured)
    names = [p.name for p in GPU_PARAMS]
    params, scales = resolve(names, base.soc)

    def residuals(values: np.ndarray) -> np.ndarray:
        fitted = apply(base.raw, base.soc, params, values * scales)[1]
        return np.log(np.concatenate([c.durations(fitted) for c in cases]) / measured)

    return dict(zip(names, least_squares_log(residuals, [p.start for p in GPU_PARAMS],
                                             *_bounds(GPU_PARAMS))))


def _bounds(params) -> tuple[list[float], list[float]]:
    """Fractions in (0, 1], everything else positive."""
    return [0.0] * len(params), [1.0 if p.bounded else np.inf for p in params]


# -- engine tables --------------------------------------------------------------
def engine_table(cal: Calibration, soc: SocSpec | str = SOC,
                 configs: list[Config] | None = None) -> pd.DataFrame:
    """Simulated seconds per model (rows) and config (columns), full engine
    (:func:`validation.fitting.engine_latency`: performance governor, thermal off)."""
    soc = load_soc(soc) if isinstance(soc, str) else soc
    configs = configs or TARGETS
    return pd.DataFrame({c.name: [engine_latency(soc, cal.traces[c.precision][m], c.setting)
                                  for m in cal.models] for c in configs}, index=cal.models)


def error_table(cal: Calibration, simulated: pd.DataFrame) -> pd.DataFrame:
    """Signed % errors of ``simulated`` against the measurements."""
    return (simulated / cal.measured.loc[simulated.index, simulated.columns] - 1) * 100


def summarize(errors: pd.DataFrame) -> pd.DataFrame:
    """:func:`validation.fitting.summarize` of a model x config error table: per config,
    median |error| %, share within 10 % and 20 %, median signed error %."""
    stacked = errors.melt(var_name="config", value_name="error").dropna()
    return summarize_rows(stacked["error"].to_numpy(), stacked["config"].tolist())


def check_fast_model(cal: Calibration, soc: SocSpec, models: list[str] | None = None) -> float:
    """Largest relative difference between the fast model and the engine."""
    models = models or cal.models[:: max(1, len(cal.models) // 5)]
    worst = 0.0
    for model in models:
        for config in TARGETS:
            trace = cal.traces[config.precision][model]
            fast = FastCase(soc, trace, config.setting).latency(soc)
            worst = max(worst, abs(fast / engine_latency(soc, trace, config.setting) - 1))
    return worst
