"""Running an experiment: expand, check, execute every run, write the output folder.

:func:`run_experiment` is the engine behind ``socsim run`` and
:func:`simulator.run`. Runs execute on an executor (:mod:`simulator.executors`)
through :func:`simulator.worker.execute_run`, which never raises for a bad run: a failure
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
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Any

import pandas as pd

from . import results as out_files
from .errors import ConfigError
from .experiment import (
    RunSpec,
    apply_overrides,
    check_experiment,
    check_plots,
    check_runs,
    expand,
    load_experiment,
)
from .library import PROJECT_ROOT
from .worker import RESULT_STATUSES, RunOutcome, RunTask, execute_run, failed_outcome, normalise


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
                   command: list[str] | None = None,
                   run_timeout: float | None = None) -> SweepResult:
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
        run_timeout: wall seconds a run may take on the Dask cluster (needs
            ``scheduler_address``); a run over it is recorded as failed.

    Returns:
        the results tables, the output folder and the manifest.

    Raises:
        ConfigError: bad input, before any run starts.
        KeyboardInterrupt: after writing the tables of the runs completed so far.
    """
    from .executors import default_workers, make_executor

    overrides = dict(overrides or {})
    if run_timeout is not None and (not scheduler_address or executor is not None
                                    or not run_timeout > 0):
        raise ConfigError("--run-timeout needs a positive time and a Dask cluster "
                          "(--scheduler-address)", path="--run-timeout")
    raw, base, file = _load(experiment, overrides)
    runs = expand(raw, overrides, file)
    check_plots(raw, runs, file)
    check_runs(runs, base, file)
    out = Path(out) if out is not None else None
    if out is not None:
        _check_out(out, resume)
    log = log or (lambda message: None)
    state = _SweepState(raw=raw, runs=runs, out=out, base=base, file=file,
                        overrides=overrides, command=command)
    if out is not None and resume:
        state.load_completed(retry_failed)
    pending = [run for run in runs if (run.index, run.repeat) not in state.records]
    if pending and executor is None:
        # before anything is written: a cluster that cannot be used is reported as such
        count = default_workers() if workers is None else workers
        executor = make_executor(min(count, len(pending)), scheduler_address, run_timeout)
    if out is not None:
        out_files.write_yaml(out / "config.yaml", json.loads(json.dumps(raw, default=str)))
        state.write_manifest("running")
    try:
        if pending:
            state.executor = executor.describe()
            try:
                state.execute(executor, pending, progress, log)
            finally:
                executor.close()
    except KeyboardInterrupt:
        state.finish("interrupted", log)
        raise
    except BaseException:
        # a lost cluster, a broken executor: the folder keeps what finished and says
        # the sweep failed (never "running" after the process is gone)
        state.finish("failed", log)
        raise
    # a local pool's workers draw the plots (see draw_plots): closed after the runs,
    # it starts new ones for them
    return state.finish("complete", log, executor if pending else None)


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
        # the code that runs is the code loaded now, whatever is committed meanwhile
        self.git_commit = out_files.git_commit(PROJECT_ROOT)

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
        from .progress import ProgressBar

        # Workers on this machine write their runs' folders themselves; remote ones
        # (Dask) send the tables back and this process writes them.
        local = self.out is not None and getattr(executor, "shares_files", False)
        base = str(self.base.resolve())
        tasks = [RunTask(spec=run, base=base, versions=self.versions, file=self.file,
                         run_dir=str(self.run_dir(run).resolve()) if local else None)
                 for run in pending]
        lines = _ProgressLines(len(self.runs), len(self.runs) - len(pending),
                               log if not progress else None)
        options = {}
        if getattr(executor, "keeps_affinity", False):
            # runs of one workload build the same trace: a worker that built it keeps them
            options["affinity"] = [json.dumps(run.config.get("workload"), sort_keys=True,
                                              default=str) for run in pending]
        # The plotting module (matplotlib: ~0.5 s to import) is imported once a local
        # worker has no run left to take, on the core it leaves idle: the plots (drawn
        # here, or by workers forked from here) then find it imported.
        workers = getattr(executor, "workers", 1)
        warm_plots = local and bool(self.raw.get("plots")) and workers > 1
        outstanding = len(tasks)
        with ProgressBar(total=len(self.runs), initial=len(self.runs) - len(pending),
                         unit="run", disable=not progress, dynamic_ncols=True,
                         leave=False) as bar:
            for position, outcome in executor.map_unordered(execute_run, tasks, **options):
                run = pending[position]
                if isinstance(outcome, BaseException):
                    outcome = failed_outcome(run, outcome)
                    outcome.record = normalise(outcome.record)
                self.add(run, outcome)
                if outcome.record["status"] not in RESULT_STATUSES:
                    message = f"run {run.run_id} failed: {outcome.record['error']}"
                    if progress:
                        bar.write(message, file=sys.stderr)
                    else:
                        log(message)
                bar.update(1)
                lines.update(outcome.record["status"] not in RESULT_STATUSES)
                outstanding -= 1
                if warm_plots and outstanding < workers:  # (after the run is kept)
                    warm_plots = False
                    import_module("simulator.plots.figure")

    def add(self, run: RunSpec, outcome: RunOutcome) -> None:
        """Keep one finished run and write its folder."""
        key = (run.index, run.repeat)
        self.records[key] = outcome.record
        self.wall[run.run_id] = outcome.wall_time_s
        if outcome.written:
            self.series[key] = outcome.timeseries
            return
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

    def finish(self, status: str, log, executor=None) -> SweepResult:
        """Build the tables from the records; write them, the plots (drawn by
        ``executor``'s workers if it is a local pool: :func:`~simulator.plots.draw_plots`)
        and the manifest."""
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
            # After Ctrl-C or a failure leave quickly; the plots come with the resumed sweep.
            if records and self.raw.get("plots") and status == "complete":
                from .plots import draw_plots

                spec = check_experiment(self.raw, self.file)
                files, plot_errors = draw_plots(spec.plots, results, timeseries,
                                                self.out / "plots", spec.plot_style, executor)
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
            "versions": self.versions, "git_commit": self.git_commit,
            "executor": self.executor,
            "timings": {"started_utc": self.started, "finished_utc": out_files.utc_now(),
                        "wall_time_s": time.perf_counter() - self.clock,
                        "runs_wall_time_s": sum(walls),
                        "max_run_wall_time_s": max(walls, default=0.0),
                        "per_run_wall_time_s": dict(sorted(self.wall.items()))},
            "failures": failures, "plots": plots, "plot_errors": plot_errors,
        }


class _ProgressLines:
    """One-line progress for logs (no terminal: batch jobs, ``nohup``): a line each
    time another tenth of the runs is done, or a minute has passed, and at the end.

    Args:
        total: runs in the sweep.
        done: runs already done (resumed).
        log: where lines go (None: silent, e.g. when a progress bar is shown).
    """

    EVERY_S = 60.0  # wall seconds between lines at the most

    def __init__(self, total: int, done: int, log: Callable[[str], None] | None):
        self.total, self.done, self.failed, self.log = total, done, 0, log
        self.start = self.last = time.perf_counter()
        self.next = self._next_tenth(done)

    def _next_tenth(self, done: int) -> int:
        """The first tenth of the runs (rounded up) beyond ``done``; ``total`` at most."""
        for tenth in range(1, 11):
            boundary = -(-tenth * self.total // 10)
            if boundary > done:
                return boundary
        return self.total

    def update(self, failed: bool) -> None:
        """Count one finished run; log a line when one is due."""
        self.done += 1
        self.failed += failed
        now = time.perf_counter()
        if self.log is None or (self.done < self.next and now - self.last < self.EVERY_S):
            return
        self.next = self._next_tenth(self.done)
        self.last = now
        elapsed = now - self.start
        failed_note = f", {self.failed} failed" if self.failed else ""
        self.log(f"socsim: {self.done}/{self.total} runs done{failed_note}, "
                 f"{elapsed:.0f} s elapsed")

