"""The fitting engine: bounded least squares on log(simulated / measured).

Every calibration in the project is the same problem: a handful of physically
meaningful numbers of a SoC description, a set of measurements, and a model
that predicts each measurement from the numbers. :func:`least_squares_log`
solves it (log-space values within physical bounds, deterministic from fixed
starting values); :class:`Problem` is its form for measured latencies run one
operator at a time (the vectorised cost model, :mod:`validation.fitting.fast`):
identifiability, the fit, k-fold cross-validation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from simulator.errors import ConfigError
from simulator.spec.soc import SocSpec
from validation.fitting.fast import FastCase
from validation.fitting.params import Parameter, apply, log_bounds

# A parameter is identifiable when a 1 % change of it changes some measurement by at
# least this many percent (0.02: a 2x change moves a row by ~1.4 %, about the spread of
# repeated phone measurements; below that the data cannot pin it down).
MIN_SENSITIVITY = 0.02
# Columns of the (unit-normalised) sensitivity matrix closer than this to linear
# dependence (smallest singular value) cannot be told apart by the data.
MIN_SINGULAR = 0.02
# log-space step of the finite-difference sensitivities
STEP = 1e-3
# Where else in its range a parameter is looked at when no row depends on it at its
# start (factors on the start): a lower efficiency makes a memory-bound kernel
# compute-bound, a larger fixed cost shows above the kernels' time.
PROBES = {"efficiency": (0.1, 0.01), "memory_efficiency": (0.1, 0.01),
          "memory.efficiency": (0.1,), "dispatch_overhead": (10.0, 100.0),
          "offload.switch": (10.0, 100.0), "gemm_half_channels": (10.0,)}


def least_squares_log(residuals: Callable[[np.ndarray], np.ndarray], start: Sequence[float],
                      lower: Sequence[float], upper: Sequence[float], log: bool = True,
                      **options) -> np.ndarray:
    """Minimise ``sum(residuals(values) ** 2)`` within ``[lower, upper]``.

    Args:
        residuals: values -> residual vector (usually log(simulated / measured)).
        start: starting values (clipped into the bounds).
        lower, upper: bounds of the values.
        log: optimise log(values) (positive quantities spanning decades); else the values.
        options: passed to ``scipy.optimize.least_squares`` (default ``diff_step=1e-4``).

    Returns:
        The fitted values. Deterministic: same inputs, same result.
    """
    from scipy.optimize import least_squares

    lower, upper = np.asarray(lower, float), np.asarray(upper, float)
    x0 = np.clip(np.asarray(start, float), lower, upper)
    if log:
        with np.errstate(divide="ignore"):  # a lower bound of 0 is -inf in log space
            lo, hi = np.log(lower), np.log(upper)
        x0 = np.clip(np.log(x0), lo, hi - 1e-9)
        result = least_squares(lambda x: residuals(np.exp(x)), x0, bounds=(lo, hi),
                               **{"diff_step": 1e-4, **options})
        return np.exp(result.x)
    result = least_squares(residuals, x0, bounds=(lower, upper),
                           **{"diff_step": 1e-4, **options})
    return result.x


@dataclass(frozen=True)
class Row:
    """One measurement: ``case`` (a trace on a setting), ``op`` (None: end to end; a
    kernel row number or an op kind: that kernel alone / that kind's kernels summed),
    ``measured`` seconds, ``group`` (the model: cross-validation keeps a model's rows
    together) and ``label`` (for reports)."""

    case: FastCase
    op: str | int | None
    measured: float
    group: str
    label: str


class Problem:
    """Measured latencies of one SoC and the parameters to fit to them.

    Args:
        raw: the base SoC as a plain YAML mapping (:func:`~validation.fitting.params.plain`).
        soc: the same, validated.
        rows: the measurements.
    """

    def __init__(self, raw: dict, soc: SocSpec, rows: list[Row]):
        self.raw, self.soc, self.rows = raw, soc, rows
        self.measured = np.array([r.measured for r in rows])
        # starting values found by probing (parameter name -> value), see sensitivities
        self.starts: dict[str, float] = {}

    def predict(self, soc: SocSpec, rows: list[Row] | None = None) -> np.ndarray:
        """Simulated seconds of ``rows`` (default all) with ``soc``."""
        rows = self.rows if rows is None else rows
        durations: dict[int, np.ndarray] = {}
        out = np.empty(len(rows))
        for i, row in enumerate(rows):
            key = id(row.case)
            if key not in durations:
                durations[key] = row.case.durations(soc)
            out[i] = row.case.total(durations[key], soc, row.op)
        return out

    def soc_with(self, params: list[Parameter], values) -> SocSpec:
        return apply(self.raw, self.soc, params, values)[1]

    # -- identifiability ------------------------------------------------------------
    def start(self, param: Parameter) -> float:
        """Where the fit of ``param`` starts: the base's value, or the probe value at
        which the data see it (:meth:`sensitivities`)."""
        return self.starts.get(param.name, param.start(self.soc))

    def sensitivities(self, params: list[Parameter]) -> np.ndarray:
        """d log(simulated) / d log(parameter) per row (rows x parameters), at the
        starting values (a one-sided step down: bounds are upper limits).

        A parameter no row depends on at its start may matter elsewhere in its
        range (an efficiency so high that its kernels are memory-bound matters once
        lower): such a column is taken again at the :data:`PROBES` values, and the
        first one where the data see it becomes its start (:attr:`starts`).
        """
        start = np.array([self.start(p) for p in params])
        base = np.log(self.predict(self.soc_with(params, start)))
        columns = []
        for j, p in enumerate(params):
            column = self._column(params, start, j, base)
            for factor in PROBES.get(p.kind, ()):
                if np.abs(column).max(initial=0) >= MIN_SENSITIVITY:
                    break
                lower, upper = p.bounds
                x = start.copy()
                x[j] = min(max(start[j] * factor, lower), upper)
                probe = self._column(params, x, j, np.log(self.predict(self.soc_with(params,
                                                                                     x))))
                if np.abs(probe).max(initial=0) >= MIN_SENSITIVITY:
                    column, self.starts[p.name] = probe, float(x[j])
            columns.append(column)
        return np.array(columns).T if columns else np.zeros((len(self.rows), 0))

    def _column(self, params: list[Parameter], x: np.ndarray, j: int, base: np.ndarray
                ) -> np.ndarray:
        step = x.copy()
        step[j] *= np.exp(-STEP)
        return (np.log(self.predict(self.soc_with(params, step))) - base) / -STEP

    def unidentifiable(self, params: list[Parameter]) -> list[tuple[Parameter, str]]:
        """The parameters the data cannot pin down, each with the reason (empty: all fine).

        Two reasons: no measurement moves (:data:`MIN_SENSITIVITY`), or the
        parameter moves the measurements only the way others do (its column of
        sensitivities is a combination of theirs, :data:`MIN_SINGULAR`).
        """
        if not params:
            return []
        energy = [p for p in params if p.energy]
        # ceff moves energy only; this engine fits latencies (energy rows are read and
        # reported, not fitted), so no data set identifies it here yet
        found = [(p, "it changes energy only, and socsim calibrate fits latencies (energy "
                  "fitting is not implemented)") for p in energy]
        params = [p for p in params if not p.energy]
        sens = self.sensitivities(params)
        peak = np.abs(sens).max(axis=0) if len(sens) else np.zeros(len(params))
        for p, s in zip(params, peak):
            if s < MIN_SENSITIVITY:
                found.append((p, self._why_insensitive(p, s)))
        keep = [j for j, s in enumerate(peak) if s >= MIN_SENSITIVITY]
        while len(keep) > 1:
            cols = sens[:, keep] / np.linalg.norm(sens[:, keep], axis=0)
            _, found_singular, vt = np.linalg.svd(cols, full_matrices=True)
            # fewer rows than parameters: the missing singular values are zeros
            singular = np.zeros(len(keep))
            singular[:len(found_singular)] = found_singular
            if singular[-1] >= MIN_SINGULAR:
                break
            null = vt[-1]
            involved = [params[keep[j]].name for j in np.argsort(-np.abs(null))
                        if abs(null[j]) > 0.2]
            worst = keep[int(np.argmax(np.abs(null)))]
            others = [n for n in involved if n != params[worst].name]
            found.append((params[worst], "the measurements cannot separate it from "
                          + ", ".join(others) + f" (they move every row alike; smallest "
                          f"singular value {singular[-1]:.1e})"))
            keep.remove(worst)
        return found

    def _why_insensitive(self, p: Parameter, peak: float) -> str:
        settings = [r.case.setting for r in self.rows]
        if p.kind == "memory.efficiency":
            return f"no measured kernel is bound by {p.path[0]} (largest effect {peak:.2g})"
        mine = [s for s in settings if s.processor in p.processors]
        if not mine:
            return f"no measurement runs on {'/'.join(p.processors)}"
        if p.kind in ("efficiency", "memory_efficiency", "parallel_efficiency"):
            mine = [s for s in mine if s.precision == p.path[1]]
            if not mine:
                return f"no measurement runs {'/'.join(p.processors)} in {p.path[1]}"
        if p.kind == "parallel_efficiency" and all(s.cores == 1 for s in mine):
            return f"every measurement on {'/'.join(p.processors)} uses one core"
        if p.kind in ("efficiency", "memory_efficiency"):
            cases = [r.case for r in self.rows if r.case.setting in mine]
            if not any((c.ops == p.path[2]).any() for c in cases):
                return f"no measured model has {p.path[2]} kernels there"
        return (f"a 1 % change moves no measurement by more than {peak:.2g} % (threshold "
                f"{MIN_SENSITIVITY:g} %, at its start and at the probed values)")

    def check(self, params: list[Parameter]) -> None:
        """Raise a one-line ConfigError (``--params``) naming the first parameter the
        data cannot identify (or two that set the same value)."""
        owner: dict[tuple, str] = {}
        for p in params:
            for path in p.yaml_paths():
                if path in owner:
                    raise ConfigError(f"{owner[path]} and {p.name} both set "
                                      f"{'.'.join(path)}", path="--params")
                owner[path] = p.name
        bad = self.unidentifiable(params)
        if bad:
            param, why = bad[0]
            more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
            raise ConfigError(f"{param.name} cannot be fitted to these measurements: "
                              f"{why}{more}", path="--params")

    def identifiable(self, params: list[Parameter]) -> tuple[list[Parameter], list[tuple]]:
        """(kept, dropped with reasons): the candidates the data can fit."""
        dropped = self.unidentifiable(params)
        gone = {p.name for p, _ in dropped}
        return [p for p in params if p.name not in gone], dropped

    # -- fitting --------------------------------------------------------------------
    def fit(self, params: list[Parameter], groups: set[str] | None = None) -> np.ndarray:
        """Fitted values (one per parameter) on the rows of ``groups`` (default all)."""
        rows = [r for r in self.rows if groups is None or r.group in groups]
        measured = np.array([r.measured for r in rows])
        lower, upper = log_bounds(params)

        def residuals(values: np.ndarray) -> np.ndarray:
            return np.log(self.predict(self.soc_with(params, values), rows) / measured)

        return least_squares_log(residuals, [self.start(p) for p in params],
                                 np.exp(lower), np.exp(upper))

    def errors(self, soc: SocSpec, rows: list[Row] | None = None) -> np.ndarray:
        """Signed % error of each row."""
        rows = self.rows if rows is None else rows
        measured = np.array([r.measured for r in rows])
        return (self.predict(soc, rows) / measured - 1) * 100

    def cross_validate(self, params: list[Parameter], k: int = 5, seed: int = 0
                       ) -> tuple[np.ndarray, list[np.ndarray]]:
        """``k``-fold cross-validation over the models: each fold's rows predicted by a
        fit on the other folds. Returns (signed % error per row, fitted values per fold)."""
        groups = sorted({r.group for r in self.rows}, key=[r.group for r in self.rows].index)
        errors = np.full(len(self.rows), np.nan)
        fits = []
        for test in folds(groups, k, seed):
            values = self.fit(params, set(groups) - set(test))
            fits.append(values)
            index = [i for i, r in enumerate(self.rows) if r.group in set(test)]
            errors[index] = self.errors(self.soc_with(params, values),
                                        [self.rows[i] for i in index])
        return errors, fits


def folds(items: list[str], k: int = 5, seed: int = 0) -> list[list[str]]:
    """``k`` disjoint folds of ``items`` (a seeded permutation dealt round-robin)."""
    if not 2 <= k <= len(items):
        raise ConfigError(f"cross-validation needs 2 <= k <= {len(items)} models; got {k}",
                          path="--cv")
    order = np.random.default_rng(seed).permutation(len(items))
    return [[items[i] for i in sorted(order[f::k])] for f in range(k)]


def summarize(errors: np.ndarray, labels: Sequence[str]) -> pd.DataFrame:
    """Per label: rows, median |error| %, share within 10 % and 20 %, median signed %."""
    frame = pd.DataFrame({"label": list(labels), "error": errors})
    rows = {}
    for label, group in frame.groupby("label", sort=False):
        e = group["error"].to_numpy()
        rows[label] = {"n": len(e), "median_abs_pct": float(np.median(np.abs(e))),
                       "within10_pct": float(np.mean(np.abs(e) <= 10) * 100),
                       "within20_pct": float(np.mean(np.abs(e) <= 20) * 100),
                       "median_pct": float(np.median(e))}
    return pd.DataFrame(rows).T
