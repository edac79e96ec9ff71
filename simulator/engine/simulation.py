"""One simulation run: build -> run -> collect.

:func:`simulate` takes a fully resolved experiment (no sweep left) and a seed,
builds a fresh SimPy environment with its devices, jobs and policy, runs it to
completion and returns a :class:`RunResult`. Nothing is shared between runs,
so several simulations can run in one process.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import simpy

from .._gc import gc_frozen
from ..errors import ConfigError
from ..library import load_soc
from ..network.build import build_links
from ..policy import Job, Policy, PolicyContext, make_policy
from ..spec.experiment import ExperimentSpec, WorkloadSpec
from ..spec.soc import SocSpec
from ..trace import Trace, load_trace
from .audit import Audit
from .device import Device
from .dvfs import GOVERNORS, Governor
from .job_runner import JobRunner
from .processor import Processor, Task
from .system import System

DEFAULT_DEVICE = "device"


@dataclass
class RunResult:
    """Everything one run produced.

    Attributes:
        metrics: scalar metrics, units in the names (``latency_s``, ``energy_j``).
        kernels: one row per executed kernel (job, iteration, id, processor, start_s, end_s...).
        transfers: one row per channel transfer.
        timeseries: long table ``time_s, name, value`` (temperatures, frequencies, powers).
        wall_time_s: wall-clock seconds the run took.
    """

    metrics: dict[str, float]
    kernels: pd.DataFrame
    transfers: pd.DataFrame
    timeseries: pd.DataFrame
    wall_time_s: float = 0.0
    meta: dict = field(default_factory=dict)


class _Recorder:
    """Collects tidy records as tuples (cheap on the hot path).

    With ``keep`` False (nobody will read the per-kernel tables: see
    :func:`simulate`) finished kernels are only counted, so that a long run's
    memory does not grow with its kernels; ``count`` is the number of kernels
    either way.
    """

    def __init__(self):
        self.tasks: list[tuple] = []
        self.transfers: list[tuple] = []
        self.count = 0  # finished kernels, kept or not
        self.keep = True

    def task(self, proc: Processor, task: Task, end: float) -> None:
        self.count += 1
        if self.keep:
            job, iteration, row = task.meta if task.meta else ("", 0, -1)
            self.tasks.append((job, iteration, row, task.label, proc.name, task.units,
                               task.share, task.lanes, task.start, end))

    def transfer(self, channel, start: float, end: float, nbytes: float, label: str) -> None:
        if self.keep:
            self.transfers.append((channel.name, label, nbytes, start, end))


def build_trace(workload: WorkloadSpec, base: Path | None = None) -> Trace:
    """The kernel trace of one workload (zoo model or trace file)."""
    if workload.trace is not None:
        path = Path(workload.trace)
        if not path.is_absolute() and base is not None and (base / path).exists():
            path = base / path
        trace = load_trace(path)
    else:
        from workloads.generate import generate_trace

        params = {k: v for k, v in (("input_size", workload.input_size),
                                    ("num_classes", workload.num_classes),
                                    ("width", workload.width),
                                    ("algorithm", workload.algorithm),
                                    ("stem", workload.stem)) if v is not None}
        params.update(workload.options)
        trace = generate_trace(workload.model, mode=workload.mode, batch=workload.batch,
                               precision=workload.precision or "fp32", **params)
    if workload.precision is not None and workload.algorithm is None:
        trace = trace.with_precision(workload.precision)
    return trace


def _governors(exp: ExperimentSpec, soc) -> dict[str, Governor]:
    governors = {}
    for local in soc.processors():
        choice = exp.dvfs.domains.get(local, exp.dvfs)
        name = choice.governor or exp.dvfs.governor or soc.default_governor
        params = choice.params() if choice is not exp.dvfs else exp.dvfs.params()
        cls = GOVERNORS.get(name, path=f"dvfs.domains.{local}.governor"
                            if local in exp.dvfs.domains else "dvfs.governor")
        try:
            governors[local] = cls(**_accepted(cls, params))
        except TypeError as err:
            raise ConfigError(f"governor {name!r}: {err}", path="dvfs") from None
    for local in exp.dvfs.domains:
        if local not in governors:
            raise ConfigError(f"unknown frequency domain {local!r}; this SoC has "
                              f"{', '.join(governors)}", path=f"dvfs.domains.{local}")
    return governors


def _accepted(cls, params: dict) -> dict:
    import inspect

    names = set(inspect.signature(cls.__init__).parameters) - {"self"}
    return {k: v for k, v in params.items() if k in names}


def simulate(exp: ExperimentSpec, seed: int | None = None, base: Path | None = None,
             traces: dict[int, Trace] | None = None, soc: SocSpec | None = None,
             audit: bool = False) -> RunResult:
    """Run one resolved experiment.

    Args:
        exp: the experiment, with no sweep left to expand.
        seed: the run's seed (``exp.seed`` if None).
        base: folder relative paths in the experiment are resolved against.
        traces: in-memory traces replacing workload ``i``'s trace (tests, checks).
        soc: a device description to use instead of loading ``exp.soc`` (calibration).
        audit: check the engine's promises on every kernel as the run goes
            (:mod:`simulator.engine.audit`; tests): a broken one raises
            :class:`~simulator.engine.audit.InvariantViolation`.
    """
    wall = time.perf_counter()
    seed = exp.seed if seed is None else seed
    rng = np.random.default_rng(seed)
    env = simpy.Environment()
    recorder = _Recorder()
    soc = soc or load_soc(exp.soc, base)
    specs = {DEFAULT_DEVICE: soc}
    for name, entry in exp.devices.items():
        if name == DEFAULT_DEVICE:
            if entry.soc is not None:
                raise ConfigError(f"{DEFAULT_DEVICE!r} is the experiment's own device: its "
                                  "SoC is the top-level 'soc'", path=f"devices.{name}.soc")
            continue
        if entry.soc is None:
            raise ConfigError("a device needs a 'soc'", path=f"devices.{name}")
        try:
            specs[name] = load_soc(entry.soc, base)
        except ConfigError as err:
            raise err if err.file else err.within(prefix=f"devices.{name}.soc") from None
    multi = len(specs) > 1
    devices = {}
    for name, spec in specs.items():
        if exp.thermal.ambient is not None:
            spec = spec.model_copy(update={"thermal": spec.thermal.model_copy(
                update={"ambient": exp.thermal.ambient})})
        sample_every = max(1, round(exp.outputs.sample_period / spec.thermal.step))
        devices[name] = Device(env, name, spec, _governors(exp, spec), recorder.task,
                               recorder.transfer, prefix=f"{name}:" if multi else "",
                               initial_temperature=exp.thermal.initial,
                               thermal_governor=exp.thermal.governor,
                               sample_every=sample_every,
                               slowdown=exp.devices[name].slowdown
                               if name in exp.devices else 1.0)
    system = System(devices)
    build_links(env, exp.links, system, rng, recorder.transfer, base)

    jobs = []
    for i, workload in enumerate(exp.workloads()):
        trace = traces[i] if traces and i in traces else build_trace(workload, base)
        name = workload.name or workload.model or Path(workload.trace).stem
        if any(j.name == name for j in jobs):
            name = f"{name}#{i}"
        device_name = workload.device or DEFAULT_DEVICE
        if device_name not in devices:
            raise ConfigError(f"unknown device {device_name!r}; devices are "
                              f"{', '.join(devices)}", path="workload.device")
        jobs.append(Job(name=name, trace=trace, device=device_name,
                        iterations=workload.total_iterations(), start=workload.start,
                        samples=workload.batch, params=workload.model_dump(),
                        max_in_flight=workload.max_in_flight,
                        pause_every=workload.pause_every(),
                        pause=workload.pause.duration if workload.pause else 0.0,
                        fast_forward=workload.fast_forward))
    for job in jobs:
        if job.fast_forward and (job.max_in_flight > 1 or sum(
                other.device == job.device for other in jobs) > 1):
            raise ConfigError("fast_forward needs a job alone on its device, one "
                              "iteration at a time", path="workload.fast_forward")
    policy = make_policy(dict(exp.policy))
    # Per-kernel records are kept only if written or read: by the kernel table or
    # the timeline, or by a policy's own metrics (which may read result.kernels).
    recorder.keep = (exp.outputs.kernels or exp.outputs.timeline
                     or type(policy).metrics is not Policy.metrics)
    context = PolicyContext(system=system, rng=rng)
    policy.bind(context)
    runners = []
    checker = Audit() if audit else None
    for job in jobs:
        try:
            plan = policy.plan(job)
            runners.append(JobRunner(env, system, job, plan, checker))
        except ConfigError as err:
            raise err.within(prefix="policy") from None
    context.runners.update({job.name: runner for job, runner in zip(jobs, runners)})
    for dev in system.devices.values():
        env.process(dev.sampler())
    for runner in runners:
        env.process(runner.process())
    all_done = simpy.AllOf(env, [r.done for r in runners])
    with gc_frozen():  # collections walk the run's objects only (simulator._gc)
        if exp.time_limit is not None:
            env.run(until=simpy.AnyOf(env, [all_done, env.timeout(exp.time_limit)]))
        else:
            env.run(until=all_done)
    for dev in system.devices.values():
        dev.finish()
    from ..metrics import collect_metrics

    result = collect_metrics(env, system, jobs, runners, recorder)
    result.metrics.update(policy.metrics(result, {job.name: list(runner.iteration_times)
                                                  for job, runner in zip(jobs, runners)}))
    if context.samples:
        result.timeseries = pd.concat(
            [result.timeseries,
             pd.DataFrame(context.samples, columns=result.timeseries.columns)],
            ignore_index=True)
    result.metrics = {k: float(v) for k, v in result.metrics.items()}
    result.metrics["seed"] = seed
    if checker is not None:
        result.meta["audit"] = {"iterations": checker.iterations, "kernels": checker.kernels}
    result.wall_time_s = time.perf_counter() - wall
    return result
