"""Running an experiment: expand, check, execute every run, write the output folder.

:func:`run_experiment` is the engine behind ``socsim run`` and
:func:`simulator.run`. Runs execute on an executor (:mod:`simulator.executors`)
through :func:`execute_run`, which never raises for a bad run: a failure
becomes a record with ``status: failed`` and the exception text (or
``status: oom`` for :class:`~simulator.errors.OutOfMemory`: running out of
memory is a result, not a failure), and the
other runs go on. Each finished run is written to ``runs/<run-id>/`` at once
(its ``metrics.json`` last), so an interrupted sweep keeps what it finished
and ``resume=True`` runs only the rest; the tables are always rebuilt from
the per-run records, in run order, whatever executed them.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from . import results as out_files
from .engine.simulation import RunResult, simulate
from .errors import ConfigError, OutOfMemory
from .experiment import (
    RunSpec,
    apply_overrides,
    check_experiment,
    check_runs,
    expand,
    load_experiment,
)
from .library import PROJECT_ROOT
from .spec.experiment import ExperimentSpec
from .spec.yamlio import validate


@dataclass
class RunTask:
    """What a worker needs for one run (picklable).

    Attributes:
        spec: the run (resolved config, seed, index, repeat, key).
        base: folder that relative paths in the config resolve against.
        run_dir: when set, the worker writes the run's folder there itself (local
            process pools: the writing is spread over the workers) and returns
            only the record.
        versions: package versions for ``run.json`` (with ``run_dir``).
        file: the experiment file, named by input errors found at run time.
    """

    spec: RunSpec
    base: str
    run_dir: str | None = None
    versions: dict = field(default_factory=dict)
    file: str | None = None


@dataclass
class RunOutcome:
    """What a worker returns for one run.

    Attributes:
        record: the completion record (JSON-safe; becomes ``metrics.json``).
        result: the simulation's tables, None when the run failed.
        outputs: the run's ``outputs`` options (which files to write).
        traceback: the formatted exception of a failed run.
        wall_time_s: wall-clock seconds the run took.
        host: ``hostname:pid`` of the worker.
        written: the worker already wrote the run's folder (tables not returned).
    """

    record: dict
    result: RunResult | None = None
    outputs: dict = field(default_factory=dict)
    traceback: str | None = None
    wall_time_s: float = 0.0
    host: str = ""
    written: bool = False


@dataclass
class SweepResult:
    """The outcome of :func:`run_experiment`.

    Attributes:
        results: one row per run and repeat (see :func:`simulator.results.results_table`).
        summary: mean and 95 % CI over repeats per sweep point.
        timeseries: ``run, repeat, time_s, name, value`` of every run.
        out: the output folder (None when nothing was written).
        manifest: the manifest (also ``manifest.json``).
    """

    results: pd.DataFrame
    summary: pd.DataFrame
    timeseries: pd.DataFrame
    out: Path | None
    manifest: dict

    @property
    def failures(self) -> pd.DataFrame:
        """The rows of failed runs (``oom`` runs completed: they are results)."""
        return self.results[~self.results["status"].isin(RESULT_STATUSES)]


def _one_line(exc: BaseException) -> str:
    text = str(exc) if isinstance(exc, ConfigError) else f"{type(exc).__name__}: {exc}"
    return " ".join(text.split())


def _record(spec: RunSpec) -> dict:
    return {"run": spec.index, "repeat": spec.repeat, "run_id": spec.run_id,
            "seed": spec.seed, "key": spec.key, "params": out_files.jsonable(spec.params),
            "status": "ok", "error": None, "metrics": {}}


# Statuses of runs that completed: ``oom`` reports that the workload does not fit.
RESULT_STATUSES = ("ok", "oom")


def _out_of_memory(spec: RunSpec, exc: OutOfMemory) -> RunOutcome:
    record = _record(spec)
    record.update(status="oom", error=_one_line(exc), metrics={"oom": 1.0})
    return RunOutcome(record=record)


def _failed(spec: RunSpec, exc: BaseException, tb: str | None = None) -> RunOutcome:
    record = _record(spec)
    record.update(status="failed", error=_one_line(exc), error_type=type(exc).__name__)
    return RunOutcome(record=record, traceback=tb or _one_line(exc))


def _normalise(record: dict) -> dict:
    # A JSON round trip makes in-memory records equal to the ones read back on resume.
    return json.loads(json.dumps(record, default=str))


def execute_run(task: RunTask) -> RunOutcome:
    """Simulate one run; any exception becomes a failed record (never raises).

    Args:
        task: the run and its base folder.

    Returns:
        the run's outcome; ``record["metrics"]`` holds floats with units in names.
    """
    start = time.perf_counter()
    spec = task.spec
    try:
        exp = validate(ExperimentSpec, spec.config)
        result = simulate(exp, spec.seed, Path(task.base))
        record = _record(spec)
        record["metrics"] = out_files.metric_values(result.metrics)
        outcome = RunOutcome(record=record, result=result, outputs=exp.outputs.model_dump())
    except OutOfMemory as exc:
        outcome = _out_of_memory(spec, exc)
    except Exception as exc:  # a run fails alone; the sweep goes on
        if isinstance(exc, ConfigError) and exc.file is None and task.file:
            exc = exc.within(file=task.file)  # its YAML path is in the experiment
        outcome = _failed(spec, exc, traceback.format_exc())
    outcome.record = _normalise(outcome.record)
    outcome.wall_time_s = time.perf_counter() - start
    outcome.host = f"{socket.gethostname()}:{os.getpid()}"
    if task.run_dir is not None:
        out_files.write_run_folder(Path(task.run_dir), spec, outcome, task.versions)
        outcome.result, outcome.traceback, outcome.written = None, None, True
    elif outcome.result is not None and not (outcome.outputs.get("kernels")
                                             or outcome.outputs.get("timeline")):
        # Nobody will write the per-kernel tables: do not ship them back.
        outcome.result.kernels = outcome.result.kernels.iloc[0:0]
        outcome.result.transfers = outcome.result.transfers.iloc[0:0]
    return outcome


def _load(experiment: str | Path | dict, overrides: dict[str, Any]
          ) -> tuple[dict, Path, str | None]:
    if isinstance(experiment, dict):
        raw = apply_overrides(experiment, overrides)
        check_experiment(raw)
        return raw, Path.cwd(), None
    raw, base = load_experiment(experiment, overrides)
    return raw, base, str(experiment)


def _check_out(out: Path, resume: bool) -> None:
    if out.exists() and not out.is_dir():
        raise ConfigError("output path exists and is not a folder", file=str(out))
    if not resume and out.is_dir() and ((out / "runs").exists()
                                        or (out / "results.csv").exists()):
        raise ConfigError("output folder already holds results; add --resume to continue "
                          "it or choose another --out", file=str(out))


def run_experiment(experiment: str | Path | dict, overrides: dict[str, Any] | None = None,
                   out: str | Path | None = None, workers: int | None = 1,
                   scheduler_address: str | None = None, resume: bool = False,
                   retry_failed: bool = False, progress: bool = False,
                   log: Callable[[str], None] | None = None, executor=None,
                   command: list[str] | None = None) -> SweepResult:
    """Run every run of an experiment and collect (and optionally write) the results.

    Args:
        experiment: path to an experiment YAML, or the experiment as a mapping
            (relative paths then resolve against the working directory).
        overrides: ``{dotted.path: value}`` applied before expansion (``--set``).
        out: output folder; nothing is written when None.
        workers: local worker processes (None: one per CPU; 1: in this process).
        scheduler_address: a Dask scheduler (``tcp://host:8786``); overrides ``workers``.
        resume: keep runs of ``out`` whose completion record matches; run the rest.
        retry_failed: with ``resume``, run failed runs again too.
        progress: show a progress bar (with ETA) on stderr.
        log: called with one-line notes (failed runs, plot problems).
        executor: an executor object to use instead of ``workers``/``scheduler_address``.
        command: the command line, for the manifest.

    Returns:
        the results tables, the output folder and the manifest.

    Raises:
        ConfigError: bad input, before any run starts.
        KeyboardInterrupt: after writing the tables of the runs completed so far.
    """
    from .executors import default_workers, make_executor

    overrides = dict(overrides or {})
    raw, base, file = _load(experiment, overrides)
    runs = expand(raw, overrides, file)
    check_runs(runs, base, file)
    out = Path(out) if out is not None else None
    if out is not None:
        _check_out(out, resume)
    log = log or (lambda message: None)
    state = _SweepState(raw=raw, runs=runs, out=out, base=base, file=file,
                        overrides=overrides, command=command)
    if out is not None:
        out_files.write_yaml(out / "config.yaml", json.loads(json.dumps(raw, default=str)))
        if resume:
            state.load_completed(retry_failed)
        state.write_manifest("running")
    pending = [run for run in runs if (run.index, run.repeat) not in state.records]
    if pending:
        if executor is None:
            count = default_workers() if workers is None else workers
            executor = make_executor(min(count, len(pending)), scheduler_address)
        state.executor = executor.describe()
        try:
            state.execute(executor, pending, progress, log)
        except KeyboardInterrupt:
            executor.close()
            state.finish("interrupted", log)
            raise
        finally:
            executor.close()
    return state.finish("complete", log)


class _SweepState:
    """Records gathered so far, and the writing of the output folder."""

    def __init__(self, raw: dict, runs: list[RunSpec], out: Path | None, base: Path,
                 file: str | None, overrides: dict, command: list[str] | None):
        self.raw, self.runs, self.out, self.base, self.file = raw, runs, out, base, file
        self.overrides, self.command = overrides, command
        self.records: dict[tuple[int, int], dict] = {}
        self.series: dict[tuple[int, int], pd.DataFrame | None] = {}
        self.wall: dict[str, float] = {}
        self.resumed = 0
        self.executor: dict = {"kind": "none", "workers": 0}
        self.started = out_files.utc_now()
        self.clock = time.perf_counter()
        self.versions = out_files.versions()

    def run_dir(self, run: RunSpec) -> Path:
        assert self.out is not None
        return self.out / "runs" / run.run_id

    def load_completed(self, retry_failed: bool) -> None:
        """Adopt the matching completion records already in the output folder."""
        for run in self.runs:
            record = out_files.read_record(self.run_dir(run))
            if record is None or record.get("key") != run.key:
                continue
            if retry_failed and record.get("status") != "ok":
                continue
            self.records[(run.index, run.repeat)] = record
            self.resumed += 1

    def execute(self, executor, pending: list[RunSpec], progress: bool, log) -> None:
        from tqdm import tqdm

        # Workers on this machine write their runs' folders themselves; remote ones
        # (Dask) send the tables back and this process writes them.
        local = self.out is not None and getattr(executor, "shares_files", False)
        base = str(self.base.resolve())
        tasks = [RunTask(spec=run, base=base, versions=self.versions, file=self.file,
                         run_dir=str(self.run_dir(run).resolve()) if local else None)
                 for run in pending]
        with tqdm(total=len(self.runs), initial=len(self.runs) - len(pending), unit="run",
                  disable=not progress, dynamic_ncols=True, leave=False) as bar:
            for position, outcome in executor.map_unordered(execute_run, tasks):
                run = pending[position]
                if isinstance(outcome, BaseException):
                    outcome = _failed(run, outcome)
                    outcome.record = _normalise(outcome.record)
                self.add(run, outcome)
                if outcome.record["status"] not in RESULT_STATUSES:
                    message = f"run {run.run_id} failed: {outcome.record['error']}"
                    if progress:
                        bar.write(message, file=sys.stderr)
                    else:
                        log(message)
                bar.update(1)

    def add(self, run: RunSpec, outcome: RunOutcome) -> None:
        """Keep one finished run and write its folder."""
        key = (run.index, run.repeat)
        self.records[key] = outcome.record
        self.wall[run.run_id] = outcome.wall_time_s
        if outcome.written:
            return  # its time series is read back from its folder when needed
        result = outcome.result
        keep_series = result is not None and outcome.outputs.get("timeseries", True)
        self.series[key] = result.timeseries if keep_series else None
        if self.out is not None:
            out_files.write_run_folder(self.run_dir(run), run, outcome, self.versions)

    def _timeseries(self) -> pd.DataFrame:
        frames = {}
        for run in self.runs:
            key = (run.index, run.repeat)
            if key not in self.records:
                continue
            if key in self.series:
                frames[key] = self.series[key]
            elif self.out is not None:
                frames[key] = out_files.read_frame(self.run_dir(run) / "timeseries.parquet")
        return out_files.timeseries_table(frames)

    def finish(self, status: str, log) -> SweepResult:
        """Build the tables from the records; write them, the plots and the manifest."""
        records = [self.records[(r.index, r.repeat)] for r in self.runs
                   if (r.index, r.repeat) in self.records]
        if records:
            results = out_files.results_table(records)
        else:
            results = pd.DataFrame(columns=[*out_files.LEAD_COLUMNS, "status", "error"])
        summary = out_files.summary_table(results) if records else pd.DataFrame()
        timeseries = self._timeseries()
        plots: list[str] = []
        plot_errors: list[str] = []
        if self.out is not None:
            out_files.write_frame(self.out / "results.csv", results)
            out_files.write_frame(self.out / "results.parquet", results)
            out_files.write_frame(self.out / "summary.csv", summary)
            out_files.write_frame(self.out / "timeseries.parquet", timeseries)
            # After Ctrl-C leave quickly; the plots come with the resumed sweep.
            if records and self.raw.get("plots") and status != "interrupted":
                from .plots import draw_plots

                spec = check_experiment(self.raw, self.file)
                files, plot_errors = draw_plots(spec.plots, results, timeseries,
                                                self.out / "plots")
                plots = [str(p.relative_to(self.out)) for p in files]
                for message in plot_errors:
                    log(f"plot skipped: {message}")
        manifest = self.manifest(status, results, plots, plot_errors)
        if self.out is not None:
            out_files.write_json(self.out / "manifest.json", manifest)
        return SweepResult(results=results, summary=summary, timeseries=timeseries,
                           out=self.out, manifest=manifest)

    def write_manifest(self, status: str) -> None:
        assert self.out is not None
        out_files.write_json(self.out / "manifest.json", self.manifest(status, None, [], []))

    def manifest(self, status: str, results: pd.DataFrame | None, plots: list[str],
                 plot_errors: list[str]) -> dict:
        failures = [{"run": r["run"], "repeat": r["repeat"], "run_id": r["run_id"],
                     "error": r["error"]} for r in sorted(
                         self.records.values(), key=lambda r: (r["run"], r["repeat"]))
                    if r["status"] not in RESULT_STATUSES]
        walls = list(self.wall.values())
        return {
            "experiment": self.raw.get("name"), "file": self.file,
            "base": str(self.base.resolve()), "status": status,
            "command": self.command, "overrides": out_files.jsonable(self.overrides),
            "seed": self.raw.get("seed", 0), "repeats": self.raw.get("repeats", 1),
            "runs": len(self.runs), "completed": len(self.records),
            "failed": len(failures), "resumed": self.resumed,
            "seeds": {r.run_id: r.seed for r in self.runs},
            "versions": self.versions, "git_commit": out_files.git_commit(PROJECT_ROOT),
            "executor": self.executor,
            "timings": {"started_utc": self.started, "finished_utc": out_files.utc_now(),
                        "wall_time_s": time.perf_counter() - self.clock,
                        "runs_wall_time_s": sum(walls),
                        "max_run_wall_time_s": max(walls, default=0.0),
                        "per_run_wall_time_s": dict(sorted(self.wall.items()))},
            "failures": failures, "plots": plots, "plot_errors": plot_errors,
        }
