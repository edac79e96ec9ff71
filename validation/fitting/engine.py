"""The fitting engine: bounded least squares on log(simulated / measured).

Every calibration in the project is the same problem: a handful of physically
meaningful numbers of a SoC description, a set of measurements, and a model
that predicts each measurement from the numbers. :func:`least_squares_log`
solves it (log-space values within physical bounds, deterministic from fixed
starting values); :class:`Problem` is its form for measured latencies run one
operator at a time (the vectorised cost model, :mod:`validation.fitting.fast`)
and, optionally, the energies of such runs (the full engine: ``power.ceff``):
identifiability, the fit (latency first, then energy with the latency
parameters fixed, as the studies do), k-fold cross-validation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from simulator.errors import ConfigError
from simulator.spec.soc import SocSpec
from validation.fitting.fast import FastCase, engine_energy, engine_latency
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


@dataclass(frozen=True)
class EnergyRow:
    """One measured energy: whole-device joules of one run of ``case`` (end to end),
    as the engine's ``energy_per_iteration_j``."""

    case: FastCase
    measured: float
    group: str
    label: str


class Problem:
    """Measured latencies (and energies) of one SoC and the parameters to fit to them.

    Args:
        raw: the base SoC as a plain YAML mapping (:func:`~validation.fitting.params.plain`).
        soc: the same, validated.
        rows: the latency measurements.
        energy_rows: the energy measurements (fitted with ``power.ceff`` parameters).
    """

    def __init__(self, raw: dict, soc: SocSpec, rows: list[Row],
                 energy_rows: list[EnergyRow] | None = None):
        self.raw, self.soc, self.rows = raw, soc, rows
        self.energy_rows = list(energy_rows or [])
        self.measured = np.array([r.measured for r in rows])

    def predict(self, soc: SocSpec, rows: list[Row] | None = None) -> np.ndarray:
        """Simulated seconds of ``rows`` (default all) with ``soc``."""
        rows = self.rows if rows is None else rows
        durations: dict[int, np.ndarray] = {}
        memo: dict = {}  # lookups shared by the cases of this soc
        out = np.empty(len(rows))
        for i, row in enumerate(rows):
            key = id(row.case)
            if key not in durations:
                durations[key] = row.case.durations(soc, memo)
            out[i] = row.case.total(durations[key], soc, row.op, memo)
        return out

    def fast_model_gaps(self, tolerance: float = 1e-6) -> list[tuple[str, str, float]]:
        """(model, setting, relative difference) where the fast model and the full engine
        disagree on the base SoC, one end-to-end row per setting checked. The fast model
        leaves out trace columns the zoo rarely sets (SIMD lane waste, strided reads,
        batch padding); a gap means the fit would absorb them into the parameters."""
        gaps, seen = [], set()
        for row in self.rows:
            if row.op is not None or row.case.setting in seen:
                continue
            seen.add(row.case.setting)
            fast = row.case.latency(self.soc)
            engine = engine_latency(self.soc, row.case.trace, row.case.setting)
            if abs(fast / engine - 1) > tolerance:
                gaps.append((row.group, row.label, fast / engine - 1))
        return gaps

    def soc_with(self, params: list[Parameter], values) -> SocSpec:
        return apply(self.raw, self.soc, params, values)[1]

    # -- identifiability ------------------------------------------------------------
    def start(self, param: Parameter) -> float:
        """Where the fit of ``param`` starts: the base's value (inside its bounds)."""
        return param.start(self.soc)

    def sensitivities(self, params: list[Parameter]) -> np.ndarray:
        """d log(simulated) / d log(parameter) per row (rows x parameters), at the
        starting values (a one-sided step down: bounds are upper limits).

        Taken at the start only: a parameter may matter elsewhere in its range (an
        efficiency so high that its kernels are memory-bound matters once lower), but
        looking there lets the fit turn the costs of small memory-bound operators into
        free knobs that absorb other models' errors (tried: pooling efficiencies fell
        to 0.003 while the per-operator cost halved), so such a parameter is reported
        and left to the user (lower it in the base, then ask for it).
        """
        start = np.array([self.start(p) for p in params])
        base = np.log(self.predict(self.soc_with(params, start)))
        columns = []
        for j in range(len(params)):
            step = start.copy()
            step[j] *= np.exp(-STEP)
            columns.append((np.log(self.predict(self.soc_with(params, step))) - base) / -STEP)
        return np.array(columns).T if columns else np.zeros((len(self.rows), 0))

    def unidentifiable(self, params: list[Parameter]) -> list[tuple[Parameter, str]]:
        """The parameters the data cannot pin down, each with the reason (empty: all fine).

        Two reasons: no measurement moves (:data:`MIN_SENSITIVITY`), or the
        parameter moves the measurements only the way others do (its column of
        sensitivities is a combination of theirs, :data:`MIN_SINGULAR`).
        """
        if not params:
            return []
        # ceff moves the energy of every run on its processors (dynamic power is
        # ceff V^2 f while it computes), so energy rows there identify it; clusters
        # measured on separate rows are told apart
        found = []
        for p in (p for p in params if p.energy):
            if not any(r.case.setting.processor in p.processors for r in self.energy_rows):
                found.append((p, "it changes energy only, and no energy measurement runs on "
                              + "/".join(p.processors)))
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
        return (f"at its start a 1 % change moves no measurement by more than {peak:.2g} % "
                f"(threshold {MIN_SENSITIVITY:g} %)")

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
        """Fitted values (one per parameter) on the rows of ``groups`` (default all):
        the latency parameters on the latency rows, then the energy ones (``power.ceff``)
        on the energy rows with the latency ones in place."""
        timing = [p for p in params if not p.energy]
        energy = [p for p in params if p.energy]
        fitted = dict(zip([p.name for p in timing], self._fit_latency(timing, groups)))
        if energy:
            rows = [r for r in self.energy_rows if groups is None or r.group in groups]
            measured = np.array([r.measured for r in rows])
            fixed = [fitted[p.name] for p in timing]

            def residuals(values: np.ndarray) -> np.ndarray:
                soc = self.soc_with(timing + energy, [*fixed, *values])
                return np.log(self.predict_energy(soc, rows) / measured)

            lower, upper = log_bounds(energy)
            # each value moves the energy of its own rows nearly in proportion
            values = least_squares_log(residuals, [self.start(p) for p in energy],
                                       np.exp(lower), np.exp(upper), diff_step=1e-3,
                                       xtol=1e-6)
            fitted.update(zip([p.name for p in energy], values))
        return np.array([fitted[p.name] for p in params])

    def _fit_latency(self, params: list[Parameter], groups: set[str] | None) -> np.ndarray:
        if not params:
            return np.zeros(0)
        rows = [r for r in self.rows if groups is None or r.group in groups]
        measured = np.array([r.measured for r in rows])
        lower, upper = log_bounds(params)

        def residuals(values: np.ndarray) -> np.ndarray:
            return np.log(self.predict(self.soc_with(params, values), rows) / measured)

        return least_squares_log(residuals, [self.start(p) for p in params],
                                 np.exp(lower), np.exp(upper))

    def predict_energy(self, soc: SocSpec, rows: list[EnergyRow] | None = None
                       ) -> np.ndarray:
        """Simulated joules of energy ``rows`` (default all), full engine."""
        rows = self.energy_rows if rows is None else rows
        return np.array([engine_energy(soc, r.case.trace, r.case.setting) for r in rows])

    def energy_errors(self, soc: SocSpec, rows: list[EnergyRow] | None = None
                      ) -> np.ndarray:
        """Signed % error of each energy row."""
        rows = self.energy_rows if rows is None else rows
        measured = np.array([r.measured for r in rows])
        return (self.predict_energy(soc, rows) / measured - 1) * 100

    def errors(self, soc: SocSpec, rows: list[Row] | None = None) -> np.ndarray:
        """Signed % error of each row."""
        rows = self.rows if rows is None else rows
        measured = np.array([r.measured for r in rows])
        return (self.predict(soc, rows) / measured - 1) * 100

    def cross_validate(self, params: list[Parameter], k: int = 5, seed: int = 0
                       ) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
        """``k``-fold cross-validation over the models: each fold's rows predicted by a
        fit on the other folds. Returns (signed % error per latency row, fitted values
        per fold, signed % error per energy row: NaN when no energy is fitted)."""
        groups = sorted({r.group for r in self.rows}, key=[r.group for r in self.rows].index)
        errors = np.full(len(self.rows), np.nan)
        energy = np.full(len(self.energy_rows), np.nan)
        fits = []
        for test in folds(groups, k, seed):
            values = self.fit(params, set(groups) - set(test))
            fits.append(values)
            soc = self.soc_with(params, values)
            index = [i for i, r in enumerate(self.rows) if r.group in set(test)]
            errors[index] = self.errors(soc, [self.rows[i] for i in index])
            index = [i for i, r in enumerate(self.energy_rows) if r.group in set(test)]
            if index and any(p.energy for p in params):
                energy[index] = self.energy_errors(soc, [self.energy_rows[i] for i in index])
        return errors, fits, energy


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
