"""Pre-flight: everything a run would reject, checked before anything is written.

Two passes, both before the output folder exists:

1. names and files every run refers to (SoCs, policies and their parameters,
   models), and every distinct trace file, loaded and validated;
2. one representative run per distinct device and policy configuration is
   built and planned (:class:`~simulator.engine.simulation.Simulation`
   ``.build().plan()``, not run): the policy's processor and core-count
   checks, the workloads' traces and devices, the engine's placement checks.

The representative of a configuration is its first run; a problem that only
another workload of the same configuration would meet still surfaces when
that run runs. Planning costs ~0.1 s per configuration (1.7 s for the 15 of
experiments/mandheling/per_batch.yaml, 90 runs) but up to ~0.5 s for
NestDNN's lifecycles (38 s for all of experiments/nestdnn/alpha-sweep.yaml), so
only the first :data:`PLAN_LIMIT` configurations are planned (a count, not a
time budget: which input errors are caught before the run must not depend on
the machine's speed); the others are checked when their runs run, as before.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ConfigError, OutOfMemory
from .expand import RunSpec
from .sweep import parse_sweep

# The keys a run's devices and plan depend on besides its workload (the seed,
# name, plots and outputs change neither).
PLAN_KEYS = ("soc", "devices", "links", "dvfs", "thermal", "policy")
PLAN_LIMIT = 8  # configurations planned before the runs start (~1-4 s)


def check_runs(runs: list[RunSpec], base: Path, file: str | None = None) -> None:
    """Check names and files every run depends on, before anything runs.

    Unknown SoCs, policies, policy parameters, models and missing trace files
    are input errors of the whole experiment, reported here with their path.

    Raises:
        ConfigError: the first problem, naming the run it was found in.
    """
    from ..library import load_soc
    from ..policy import make_policy

    seen: set[str] = set()
    for run in runs:
        config = run.config
        checks: list[tuple[str, Callable[[], Any]]] = [
            ("soc", lambda c=config: load_soc(c["soc"], base)),
            ("policy", lambda c=config: make_policy(dict(c["policy"]))),
        ]
        workloads = config["workload"]
        for i, workload in enumerate(workloads if isinstance(workloads, list) else [workloads]):
            where = "workload" if isinstance(workloads, dict) else f"workload[{i}]"
            if workload.get("trace") is not None:
                checks.append((where, lambda w=workload: _trace_loads(w["trace"], base)))
            elif workload.get("model") is not None:
                checks.append((where, lambda w=workload: _model_exists(w["model"])))
        for where, check in checks:
            identity = where + json.dumps(_pick(config, where), sort_keys=True, default=str)
            if identity in seen:
                continue
            seen.add(identity)
            try:
                check()
            except ConfigError as err:
                raise _anchored(err, where, run, len(runs), file) from None
    _check_plans(runs, base, file)


def _check_plans(runs: list[RunSpec], base: Path, file: str | None) -> None:
    """Build and plan the first run of each distinct :data:`PLAN_KEYS` configuration."""
    from ..engine.simulation import Simulation
    from ..spec.experiment import ExperimentSpec
    from ..spec.yamlio import validate

    seen: set[str] = set()
    for run in runs:
        identity = json.dumps({k: run.config.get(k) for k in PLAN_KEYS}, sort_keys=True,
                              default=str)
        if identity in seen:
            continue
        if len(seen) == PLAN_LIMIT:
            return
        seen.add(identity)
        try:
            Simulation(validate(ExperimentSpec, run.config), run.seed, base).build().plan()
        except OutOfMemory:
            continue  # a result (the run's status is "oom"), not bad input
        except ConfigError as err:
            raise _anchored(err, "", run, len(runs), file) from None
        except Exception:  # noqa: BLE001, S112 - a crash is the run's own failure record
            continue


def check_plots(raw: dict, runs: list[RunSpec], file: str | None = None) -> None:
    """Check that every ``order``, ``hue_order`` and ``facet_order`` names values the
    column takes, for columns the sweep or ``--set`` decides, and that every
    ``where`` on a swept column keeps some run (a metric's values are only known after
    the runs; such orders and filters are checked when the plot is drawn).

    Raises:
        ConfigError: at ``plots[i].order`` (etc.) or ``plots[i].where.<column>``,
            listing the column's values.
    """
    plots = raw.get("plots") or []
    keys = ("order", "hue_order", "facet_order")
    if not any(isinstance(p, dict) and any(p.get(k) for k in (*keys, "where"))
               for p in plots):
        return
    from ..plots.data import categories, fmt, match_order
    from .load import check_experiment

    spec = check_experiment(raw, file)
    swept = set(parse_sweep(raw["sweep"], file).paths()) if raw.get("sweep") else set()
    params: dict[str, list[Any]] = {}
    for run in runs:
        for column, value in run.params.items():
            params.setdefault(column, []).append(_as_cell(value))
    for i, plot in enumerate(spec.plots):
        for key, column in zip(keys, (plot.x, plot.hue, plot.facet), strict=True):
            entries = getattr(plot, key)
            values = _values_of(column, params) if entries is not None and column else None
            if values is None:
                continue
            labels = [fmt(v) for v in categories(values)]
            try:
                match_order(entries, labels, column, f"plots[{i}].{key}")
            except ConfigError as err:
                raise err.within(file=file) from None
        for column, wanted in plot.where.items():
            # a swept column only: one pinned by --set (a sweep narrowed for a quick
            # look) leaves the plot to be skipped, with its reason, when it is drawn
            if column in params and column in swept:
                _check_where(column, wanted, params[column], f"plots[{i}].where.{column}",
                             file)


def _check_where(column: str, wanted: Any, values: list[Any], path: str,
                 file: str | None) -> None:
    """A ``where`` entry on a parameter column must keep at least one run."""
    import pandas as pd

    from ..plots.data import apply_where, categories, fmt

    try:
        apply_where(pd.DataFrame({column: values}), {column: wanted}, path)
    except ConfigError:
        labels = [fmt(v) for v in categories(values)]
        shown = ", ".join(labels[:12]) + (", ..." if len(labels) > 12 else "")
        raise ConfigError(f"{wanted!r} matches no run; the values of {column!r}: {shown}",
                          file=file, path=path) from None


def _as_cell(value: Any) -> Any:
    """A parameter as the results table holds it (mappings and lists as JSON text)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return json.dumps(value, sort_keys=True)


def _values_of(column: str, params: dict[str, list[Any]]) -> list[Any] | None:
    """The values of a parameter column (a numeric SI twin: its text column's)."""
    from ..units import SI_SUFFIX, infer_quantities

    if column in params:
        return params[column]
    for suffix in SI_SUFFIX.values():
        base = column.removesuffix(f"_{suffix}")
        if base != column and base in params:
            quantity = infer_quantities(params[base])
            if quantity is not None and quantity[0] == suffix:
                return params[base]
    return None


def _anchored(err: ConfigError, where: str, run: RunSpec, count: int, file: str | None
              ) -> ConfigError:
    """``err`` located in the experiment file below ``where``, naming the run."""
    if err.file and err.file != file:
        return err  # a problem inside the SoC or trace file itself
    path = err.path or ""
    if where and not path.startswith(where.split("[")[0]):
        path = f"{where}.{path}" if path else where
    note = f" (run {run.run_id})" if count > 1 else ""
    return ConfigError(f"{err.message}{note}", file=file or err.file, path=path or None)


def _pick(config: dict, where: str) -> Any:
    if where.startswith("workload["):
        return config["workload"][int(where[9:-1])]
    return config.get(where)


def _trace_loads(trace: str, base: Path) -> None:
    """The trace file exists and is a valid trace (errors name the trace file)."""
    from ..trace import load_trace

    path = Path(trace)
    if not path.is_absolute() and (base / path).exists():  # as the engine resolves it
        path = base / path
    if not path.is_file():
        raise ConfigError(f"trace file not found: {trace}", path="trace")
    load_trace(path)


def _model_exists(model: str) -> None:
    from ..registry import MODELS

    MODELS.get(model, path="model")
