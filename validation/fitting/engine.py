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
# A parameter no measurement depends on at its start is scanned at this many log-spaced
# values across its bounds (a factor ~2.2 apart for an efficiency's 1e-4..1)
SCAN_POINTS = 13
# ... and fitted if a value fits the rows on its processor better than its start by a
# likelihood-ratio test: n_eff log(loss_start / loss_best) >= the 95 % point of chi-square
# with one degree of freedom (Gaussian log errors; n_eff: :func:`effective_rows`)
LR_THRESHOLD = 3.84


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


def effective_rows(residuals: np.ndarray, clusters: Sequence[str]) -> float:
    """How many independent observations ``residuals`` (log errors, one per row) are worth
    when the rows of a cluster (a model: its rows on several settings, its per-op rows)
    share part of their error.

    The rows of one model are not independent: a kernel the cost model gets wrong is wrong
    in every row of that model, so ``n`` rows of ``k`` models carry less evidence than ``n``
    independent ones, and a likelihood-ratio test counting rows is optimistic. Kish's design
    effect corrects it: ``n_eff = n / (1 + rho (sum m_g^2 / n - 1))`` over the cluster sizes
    ``m_g``, with ``rho`` the intra-class correlation of the residuals (ANOVA estimator,
    clipped to [0, 1]). ``rho = 0`` (independent rows) gives ``n``; ``rho = 1`` (every row of a
    model shares its error) gives ``n^2 / sum m_g^2`` (``k`` for equal sizes: duplicating a
    model's rows adds no evidence). One cluster, or residuals with no spread, are taken as
    ``rho = 1`` (nothing shows the rows to be independent).
    """
    residuals = np.asarray(residuals, float)
    n = len(residuals)
    if n == 0:
        return 0.0
    names = list(dict.fromkeys(clusters))
    position = {c: i for i, c in enumerate(names)}
    index = np.array([position[c] for c in clusters])
    sizes = np.bincount(index, minlength=len(names)).astype(float)
    k = len(names)
    crowding = float(np.sum(sizes ** 2) / n) - 1.0  # 0 when every cluster has one row
    if crowding <= 0:
        return float(n)
    rho = 1.0
    if k > 1:
        means = np.bincount(index, weights=residuals, minlength=k) / sizes
        between = float(np.sum(sizes * (means - residuals.mean()) ** 2)) / (k - 1)
        within = (float(np.sum((residuals - means[index]) ** 2)) / (n - k)) if n > k else 0.0
        m0 = (n - float(np.sum(sizes ** 2)) / n) / (k - 1)
        denominator = between + (m0 - 1) * within
        if denominator > 0:
            rho = min(1.0, max(0.0, (between - within) / denominator))
    return n / (1.0 + rho * crowding)


def likelihood_ratio(start: np.ndarray, best: np.ndarray, clusters: Sequence[str]) -> float:
    """The likelihood-ratio statistic of a value against the start from the rows' log
    errors at each (``start``, ``best``): ``n_eff log(loss_start / loss_best)``, the loss
    the sum of squared log errors and ``n_eff`` the rows' worth in independent
    observations (:func:`effective_rows`, from the residuals at the best value: the
    clusters' shared error the value leaves)."""
    loss_start, loss_best = float(np.sum(start ** 2)), float(np.sum(best ** 2))
    if loss_best <= 0:
        return np.inf
    return effective_rows(best, clusters) * float(np.log(loss_start / loss_best))


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
        self._sharp: dict = {}  # memo of :meth:`_fit_sharp`

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
        disagree on the base SoC, one end-to-end row per setting and signature checked
        (:attr:`FastCase.signature`: which of the trace columns the fast model leaves out
        are set, and whether the batch is padded). A gap means the fit would absorb those
        terms into the parameters."""
        gaps, seen = [], set()
        for row in self.rows:
            key = (row.case.setting, row.case.signature)
            if row.op is not None or key in seen:
                continue
            seen.add(key)
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

    def sensitivities(self, params: list[Parameter], rows: list[Row] | None = None,
                      values=None) -> np.ndarray:
        """d log(simulated) / d log(parameter) per row of ``rows`` (default all) x
        parameter, at ``values`` (default the starting values; a one-sided step down:
        bounds are upper limits)."""
        rows = self.rows if rows is None else rows
        start = (np.array([self.start(p) for p in params]) if values is None
                 else np.array(values, float))
        base = np.log(self.predict(self.soc_with(params, start), rows))
        columns = []
        for j in range(len(params)):
            step = start.copy()
            step[j] *= np.exp(-STEP)
            columns.append((np.log(self.predict(self.soc_with(params, step), rows)) - base)
                           / -STEP)
        return np.array(columns).T if columns else np.zeros((len(rows), 0))

    def scan(self, param: Parameter, fixed: list[Parameter], values, rows: list[Row]
             ) -> tuple[float, float, float | None]:
        """The loss along ``param``'s whole range, the ``fixed`` parameters at ``values``.

        The loss (sum of squared log errors) of the rows on ``param``'s processors at
        :data:`SCAN_POINTS` log-spaced values across its bounds and at its start.

        Returns:
            (the best value (the start on ties), the likelihood-ratio statistic of the
            best against the start (:func:`likelihood_ratio`: the rows counted as the
            independent observations they are worth), the lowest scanned value that predicts every row as the start does
            (None: no scanned value other than the start does)).
        """
        mine = [r for r in rows if not param.processors
                or r.case.setting.processor in param.processors]
        start = self.start(param)
        if not mine:
            return start, 0.0, None
        measured = np.array([r.measured for r in mine])
        lower, upper = param.bounds
        grid = sorted({*np.geomspace(lower, upper, SCAN_POINTS).tolist(), start})
        predicted = {v: self.predict(self.soc_with([*fixed, param], [*values, v]), mine)
                     for v in grid}
        errors = {v: np.log(p / measured) for v, p in predicted.items()}
        loss = {v: float(np.sum(e ** 2)) for v, e in errors.items()}
        best = min(grid, key=lambda v: (loss[v], v != start))
        statistic = likelihood_ratio(errors[start], errors[best], [r.group for r in mine])
        alike = [v for v in grid if v != start
                 and np.allclose(predicted[v], predicted[start], rtol=1e-9, atol=0)]
        return best, statistic, (min(alike) if alike else None)

    def _fit_sharp(self, params: list[Parameter], groups: set[str] | None) -> np.ndarray:
        """The plain least-squares fit of ``params`` from their starts (memoised: the
        first stage of :meth:`_fit_latency` and of :meth:`unidentifiable`)."""
        key = (tuple(p.name for p in params), None if groups is None else frozenset(groups))
        if key not in self._sharp:
            rows = [r for r in self.rows if groups is None or r.group in groups]
            self._sharp[key] = self._least_squares(params, rows,
                                                   [self.start(p) for p in params])
        return self._sharp[key]

    def unidentifiable(self, params: list[Parameter]) -> list[tuple[Parameter, str]]:
        """The parameters the data cannot pin down, each with the reason (empty: all fine).

        Identifiability is a property of the measurements and the model over each
        parameter's whole range, not of where the fit starts:

        * a parameter that moves some measurement at its start by at least
          :data:`MIN_SENSITIVITY` is identifiable there;
        * one that moves none there (an efficiency so high that its kernels are
          memory-bound) is scanned across its bounds (:meth:`scan`) with the others
          fitted: it is identifiable if some value fits the measurements on its
          processor better than its start by a likelihood-ratio test
          (:data:`LR_THRESHOLD`: the data prefer a value where it matters), the others
          of its processor fitted again at that value (:meth:`_profile`). If no value
          does, the data bound it from one side only (every value above the one where
          its kernels turn memory-bound fits alike) and it cannot be fitted;
        * a parameter that moves the measurements only the way others do (its column
          of sensitivities is a combination of theirs, :data:`MIN_SINGULAR`) cannot be
          told apart from them; for a scanned one this is judged at its best value.
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
        flat = []
        for p, s in zip(params, peak):
            if s < MIN_SENSITIVITY:
                why = self._why_insensitive(p)
                if why:
                    found.append((p, why))
                else:
                    flat.append(p)
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
        if flat:
            found += self._rounds([params[j] for j in keep], flat, None, judge=True)[2]
        return found

    def _rounds(self, sharp: list[Parameter], flat: list[Parameter],
                groups: set[str] | None, judge: bool
                ) -> tuple[list[Parameter], list[float], list[tuple[Parameter, str]]]:
        """Forward rounds over the ``flat`` parameters (moving no row at their start).

        ``sharp`` is fitted first; each round scans every flat parameter not yet taken
        (:meth:`scan`, the taken ones fitted), takes those whose best value is not their
        start (with ``judge``: those that also pass the likelihood-ratio test and can be
        told apart from the others there) and fits them with the taken ones from their best
        values. Rounds end when none is taken: a kernel kind may matter only once another
        one has moved.

        Returns:
            (the parameters fitted, their values, the flat ones not taken with reasons).
        """
        rows = [r for r in self.rows if groups is None or r.group in groups]
        fixed = list(sharp)
        values = list(self._fit_sharp(sharp, groups)) if sharp else []
        remaining, reasons = list(flat), {}
        while remaining:
            taken, starts = [], []
            for p in remaining:
                best, statistic, plateau = self.scan(p, fixed, values, rows)
                if judge and best != self.start(p) and statistic < LR_THRESHOLD:
                    statistic = self._profile(p, best, fixed, values, rows)
                if best == self.start(p) or (judge and statistic < LR_THRESHOLD):
                    reasons[p.name] = _flat_reason(p, self.start(p), best, statistic,
                                                   plateau)
                    continue
                if judge:
                    why = self._inseparable(p, best, [*fixed, *taken], [*values, *starts],
                                            rows)
                    if why:
                        reasons[p.name] = why
                        continue
                taken.append(p)
                starts.append(best)
            if not taken:
                break
            fixed += taken
            values = list(self._least_squares(fixed, rows, [*values, *starts]))
            remaining = [p for p in remaining if p not in taken]
        return fixed, values, [(p, reasons[p.name]) for p in remaining]

    def _inseparable(self, param: Parameter, value: float, others: list[Parameter],
                     values, rows: list[Row]) -> str | None:
        """Why ``param`` at ``value`` cannot be told apart from ``others`` (at
        ``values``): its column of sensitivities is (nearly) a combination of theirs
        (distance from their span below :data:`MIN_SINGULAR`); None if it can."""
        if not others:
            return None
        sens = self.sensitivities([*others, param], rows, [*values, value])
        norms = np.linalg.norm(sens, axis=0)
        cols = sens / np.where(norms > 0, norms, 1)
        fit = np.linalg.lstsq(cols[:, :-1], cols[:, -1], rcond=None)[0]
        distance = float(np.linalg.norm(cols[:, -1] - cols[:, :-1] @ fit))
        if distance >= MIN_SINGULAR:
            return None
        partners = [others[j].name for j in np.argsort(-np.abs(fit))[:3] if abs(fit[j]) > 0.2]
        return (f"at its best value ({_short(value, param)}) the measurements cannot separate "
                f"it from {', '.join(partners)} (distance {distance:.1e})")

    def _profile(self, param: Parameter, value: float, fixed: list[Parameter], values,
                 rows: list[Row]) -> float:
        """The likelihood-ratio statistic of ``param`` at ``value`` against its start
        with the ``fixed`` parameters of its processors fitted again (a scan holds them
        where they fit with ``param`` at its start, where they may have absorbed its
        kernels' time: the profile of the loss, not a slice of it)."""
        mine = [r for r in rows if not param.processors
                or r.case.setting.processor in param.processors]
        local = [j for j, q in enumerate(fixed) if not q.processors or not param.processors
                 or set(q.processors) & set(param.processors)]
        measured = np.array([r.measured for r in mine])

        def residuals(free: np.ndarray, at: float) -> np.ndarray:
            current = list(values)
            for j, v in zip(local, free):
                current[j] = v
            soc = self.soc_with([*fixed, param], [*current, at])
            return np.log(self.predict(soc, mine) / measured)

        start = residuals(np.array([values[j] for j in local]), self.start(param))
        if local:
            lower, upper = log_bounds([fixed[j] for j in local])
            free = least_squares_log(lambda v: residuals(v, value),
                                     [values[j] for j in local], np.exp(lower), np.exp(upper))
        else:
            free = np.zeros(0)
        return likelihood_ratio(start, residuals(free, value), [r.group for r in mine])

    def _why_insensitive(self, p: Parameter) -> str | None:
        """Why ``p`` moves no measurement when the data plainly do not exercise it
        (None: they do, only not at its start)."""
        settings = [r.case.setting for r in self.rows]
        if p.kind == "memory.efficiency":
            return None
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
        return None

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
        """Least squares from the starts; parameters no training row depends on at their
        start (memory-bound kernels) are taken in by forward rounds (:meth:`_rounds`)
        from the best values of scans of their ranges, since a local fit cannot leave a
        region where the loss is flat."""
        if not params:
            return np.zeros(0)
        rows = [r for r in self.rows if groups is None or r.group in groups]
        sens = self.sensitivities(params, rows)
        flat = np.abs(sens).max(axis=0) < MIN_SENSITIVITY if len(rows) else \
            np.ones(len(params), bool)
        if not flat.any():
            return self._least_squares(params, rows, [self.start(p) for p in params])
        fixed, values, _ = self._rounds([p for p, f in zip(params, flat) if not f],
                                        [p for p, f in zip(params, flat) if f], groups,
                                        judge=False)
        fitted = dict(zip([p.name for p in fixed], values))
        return np.array([fitted.get(p.name, self.start(p)) for p in params])

    def _least_squares(self, params: list[Parameter], rows: list[Row], starts) -> np.ndarray:
        measured = np.array([r.measured for r in rows])
        lower, upper = log_bounds(params)

        def residuals(values: np.ndarray) -> np.ndarray:
            return np.log(self.predict(self.soc_with(params, values), rows) / measured)

        return least_squares_log(residuals, starts, np.exp(lower), np.exp(upper))

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

    def subset(self, groups: set[str]) -> Problem:
        """The same problem on the rows of ``groups`` (models) only."""
        return Problem(self.raw, self.soc, [r for r in self.rows if r.group in groups],
                       [r for r in self.energy_rows if r.group in groups])

    def cross_validate(self, params: list[Parameter], k: int = 5, seed: int = 0,
                       select: Callable[[Problem], list[Parameter]] | None = None
                       ) -> tuple[np.ndarray, list[Parameter], list[np.ndarray], np.ndarray]:
        """``k``-fold cross-validation over the models: each fold's rows predicted by a
        fit on the other folds.

        Args:
            params: the parameters fitted (on all rows).
            select: how they were chosen, if from the data (the training rows' problem ->
                parameters): each fold then chooses its own from its training rows, so
                the choice is validated too (a choice made on every row would have seen
                the fold's models). None: ``params`` in every fold (chosen a priori).

        Returns:
            (signed % error per latency row, the parameters fitted in any fold: ``params``
            then those only folds chose (so a fold choosing more than the whole data does
            shows), fitted values per fold (one per parameter of that list; NaN where a fold
            did not choose it), signed % error per energy row: NaN when no energy is
            fitted).
        """
        groups = sorted({r.group for r in self.rows}, key=[r.group for r in self.rows].index)
        errors = np.full(len(self.rows), np.nan)
        energy = np.full(len(self.energy_rows), np.nan)
        chosen_per_fold, values_per_fold = [], []
        for test in folds(groups, k, seed):
            train = set(groups) - set(test)
            if select is None:
                chosen = params
                values = self.fit(params, train)
            else:
                fold = self.subset(train)
                chosen = select(fold)
                values = fold.fit(chosen)
            chosen_per_fold.append(chosen)
            values_per_fold.append(dict(zip([p.name for p in chosen], values)))
            soc = self.soc_with(chosen, values)
            index = [i for i, r in enumerate(self.rows) if r.group in set(test)]
            errors[index] = self.errors(soc, [self.rows[i] for i in index])
            index = [i for i, r in enumerate(self.energy_rows) if r.group in set(test)]
            if index and any(p.energy for p in chosen):
                energy[index] = self.energy_errors(soc, [self.energy_rows[i] for i in index])
        union = list({p.name: p for p in [*params, *(p for c in chosen_per_fold for p in c)]
                      }.values())
        fits = [np.array([fitted.get(p.name, np.nan) for p in union])
                for fitted in values_per_fold]
        return errors, union, fits, energy


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


def _short(value: float, param: Parameter) -> str:
    """``value`` in ``param``'s unit, for messages."""
    if param.unit == "s":
        return f"{value * 1e6:.3g} us"
    if param.unit == "F":
        return f"{value * 1e9:.3g} nF"
    return f"{value:.3g}"


def _flat_reason(param: Parameter, start: float, best: float, statistic: float,
                 plateau: float | None) -> str:
    """Why a parameter no row depends on at its start stays unfitted after a scan."""
    lower, upper = param.bounds
    if plateau is not None and plateau <= lower:
        where = (f"no value in {_short(lower, param)}..{_short(upper, param)} moves one "
                 f"(its kernels take too little time)")
    elif plateau is not None and best == start:
        where = (f"every value from {_short(plateau, param)} up fits them as its start does "
                 f"and lower ones fit worse: the data bound it from below only")
    else:
        where = (f"no value in {_short(lower, param)}..{_short(upper, param)} fits them "
                 f"better than its start (likelihood ratio {statistic:.2g} < "
                 f"{LR_THRESHOLD:g})")
    return f"at its start ({_short(start, param)}) no measurement depends on it, and {where}"
