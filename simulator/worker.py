"""One run on a worker: a :class:`RunTask` in, a :class:`RunOutcome` out, never an exception.

:func:`execute_run` is what every executor (in-process, local pool, Dask)
calls per run: it simulates the run, and a failure becomes a record with
``status: failed`` and the exception text (``status: oom`` for
:class:`~simulator.errors.OutOfMemory`: running out of memory is a result, not
a failure). A worker on this machine writes the run's folder itself.
"""

from __future__ import annotations

import json
import os
import socket
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from . import results as out_files
from .engine.simulation import RunResult, simulate
from .errors import ConfigError, OutOfMemory
from .experiment import RunSpec
from .spec.experiment import ExperimentSpec
from .spec.yamlio import validate

if TYPE_CHECKING:
    import pandas as pd


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
        written: the worker already wrote the run's folder (its kernel and
            transfer tables not returned).
        timeseries: a written run's time series, returned all the same (the sweep's
            table holds every run's at the end anyway; reading a hundred Parquet files
            back cost the parent ~0.2 s of a 2.5 s two-worker sweep), None if the
            outputs ask for none.
    """

    record: dict
    result: RunResult | None = None
    outputs: dict = field(default_factory=dict)
    traceback: str | None = None
    wall_time_s: float = 0.0
    host: str = ""
    written: bool = False
    timeseries: pd.DataFrame | None = None


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


def failed_outcome(spec: RunSpec, exc: BaseException, tb: str | None = None) -> RunOutcome:
    record = _record(spec)
    record.update(status="failed", error=_one_line(exc), error_type=type(exc).__name__)
    return RunOutcome(record=record, traceback=tb or _one_line(exc))


def normalise(record: dict) -> dict:
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
        outcome = failed_outcome(spec, exc, traceback.format_exc())
    outcome.record = normalise(outcome.record)
    outcome.wall_time_s = time.perf_counter() - start
    outcome.host = f"{socket.gethostname()}:{os.getpid()}"
    if task.run_dir is not None:
        out_files.write_run_folder(Path(task.run_dir), spec, outcome, task.versions)
        if outcome.result is not None and outcome.outputs.get("timeseries", True):
            outcome.timeseries = outcome.result.timeseries
        outcome.result, outcome.traceback, outcome.written = None, None, True
    elif outcome.result is not None and not (outcome.outputs.get("kernels")
                                             or outcome.outputs.get("timeline")):
        # Nobody will write the per-kernel tables: do not ship them back.
        outcome.result.kernels = outcome.result.kernels.iloc[0:0]
        outcome.result.transfers = outcome.result.transfers.iloc[0:0]
    return outcome
