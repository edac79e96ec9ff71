"""One simulation run: build -> plan -> run -> collect.

:class:`Simulation` takes a fully resolved experiment (no sweep left) and a
seed and goes through four explicit phases:

1. :meth:`Simulation.build`: a fresh SimPy environment with its devices, links,
   jobs and bound policy (nothing runs yet: code that needs a run's components,
   e.g. to time a policy's decisions, stops here);
2. :meth:`Simulation.plan`: the policy's plan for every job, and a job runner
   per plan;
3. :meth:`Simulation.run`: the SimPy run to completion or the time limit;
4. :meth:`Simulation.collect`: the :class:`RunResult` (tables and metrics).

:func:`simulate` does all four. Nothing is shared between runs, so several
simulations can run in one process.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
import simpy

from .._gc import gc_frozen
from ..errors import ConfigError
from ..metrics import collect_metrics
from ..network.build import build_links
from ..policy import Job, Policy, PolicyContext, make_policy
from ..spec.experiment import ExperimentSpec
from ..spec.soc import SocSpec
from ..trace import Trace
from .audit import Audit
from .build import DEFAULT_DEVICE, build_devices, build_jobs, build_trace, load_device_specs
from .device import Device
from .job_runner import JobRunner
from .processor import Processor, Task
from .result import RunResult
from .system import System

__all__ = ["DEFAULT_DEVICE", "RunResult", "Simulation", "build_trace", "simulate"]


class _Recorder:
    """Collects tidy records as tuples (cheap on the hot path).

    With ``keep`` False (nobody will read the per-kernel tables: see
    :meth:`Simulation.build`) finished kernels are only counted, so that a long
    run's memory does not grow with its kernels; ``count`` is the number of
    kernels either way.
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


class Simulation:
    """One run of a resolved experiment, phase by phase (see the module docstring).

    Args:
        exp: the experiment, with no sweep left to expand.
        seed: the run's seed (``exp.seed`` if None).
        base: folder relative paths in the experiment are resolved against.
        traces: in-memory traces replacing workload ``i``'s trace (tests, checks).
        soc: a device description to use instead of loading ``exp.soc`` (calibration).
        audit: check the engine's promises on every kernel as the run goes
            (:mod:`simulator.engine.audit`; tests): a broken one raises
            :class:`~simulator.engine.audit.InvariantViolation`.

    Attributes (after :meth:`build`):
        env: the SimPy environment.
        system: devices and links (``system.devices`` by name).
        jobs: one :class:`~simulator.policy.Job` per workload.
        policy: the bound policy.
        context: the :class:`~simulator.policy.PolicyContext` it was bound to.

    Attributes (after :meth:`plan`): ``runners``, one job runner per job.
    """

    def __init__(self, exp: ExperimentSpec, seed: int | None = None, base: Path | None = None,
                 traces: dict[int, Trace] | None = None, soc: SocSpec | None = None,
                 audit: bool = False):
        self.exp = exp
        self.seed = exp.seed if seed is None else seed
        self.base = base
        self._traces = traces
        self._soc = soc
        self._audit = Audit() if audit else None
        self._phase = "new"
        self.runners: list[JobRunner] = []

    def _enter(self, phase: str, after: str) -> None:
        if self._phase != after:
            raise RuntimeError(f"Simulation.{phase}() comes after {after}(); "
                               f"the last phase done is {self._phase}")
        self._phase = phase

    @property
    def devices(self) -> dict[str, Device]:
        """Devices by name (after :meth:`build`)."""
        return self.system.devices

    def build(self) -> Simulation:
        """Build the environment, devices, links, jobs and policy; bind the policy.

        Returns:
            self, so that ``Simulation(exp).build()`` reads as one step.

        Raises:
            ConfigError: bad devices, governors, links, workloads or policy parameters.
        """
        self._enter("build", "new")
        self.wall_start = time.perf_counter()
        # one generator per run; links and the policy draw from it in this order
        self.rng = np.random.default_rng(self.seed)
        self.env = simpy.Environment()
        self.recorder = _Recorder()
        specs = load_device_specs(self.exp, self.base, self._soc)
        devices = build_devices(self.env, self.exp, specs, self.recorder.task,
                                self.recorder.transfer)
        self.system = System(devices)
        build_links(self.env, self.exp.links, self.system, self.rng, self.recorder.transfer,
                    self.base, {name: entry.port for name, entry in self.exp.devices.items()})
        self.jobs: list[Job] = build_jobs(self.exp, devices, self.base, self._traces)
        self.policy: Policy = make_policy(dict(self.exp.policy))
        # Per-kernel records are kept only if written or read: by the kernel table or
        # the timeline, or by a policy's own metrics (which may read result.kernels,
        # unless the policy says they do not).
        outputs = self.exp.outputs
        overrides = type(self.policy).metrics is not Policy.metrics
        self._reads_records = overrides and self.policy.metrics_read_records
        # every iteration's (start, end), read by the records' readers and by
        # metrics that walk the iterations only (Policy.metrics_read_iterations)
        self._reads_iterations = self._reads_records or (
            overrides and self.policy.metrics_read_iterations)
        self.recorder.keep = outputs.kernels or outputs.timeline or self._reads_records
        self.context = PolicyContext(system=self.system, rng=self.rng)
        self.policy.bind(self.context)
        return self

    def plan(self) -> Simulation:
        """Ask the policy for every job's plan and make a job runner per plan.

        Raises:
            ConfigError: a plan the engine cannot run (path under ``policy``).
        """
        self._enter("plan", "build")
        # Every iteration's (start, end) is kept for a policy's metrics that read
        # records or iterations, and with several jobs (the mean latency over all of them sums
        # every iteration in completion order); else only totals and the last.
        keep = self._reads_iterations or len(self.jobs) > 1
        for job in self.jobs:
            try:
                plan = self.policy.plan(job)
                shared = sum(other.device == job.device for other in self.jobs) > 1
                self.runners.append(JobRunner(self.env, self.system, job, plan, self._audit,
                                              keep_iterations=keep, recorder=self.recorder,
                                              shares_device=shared))
            except ConfigError as err:
                raise err.within(prefix="policy") from None
        self.context.attach({job.name: runner for job, runner in zip(self.jobs, self.runners)})
        return self

    def run(self) -> Simulation:
        """Run until every job is done or the experiment's ``time_limit`` (simulated s)."""
        self._enter("run", "plan")
        env = self.env
        for dev in self.system.devices.values():
            dev.start()
        for runner in self.runners:
            env.process(runner.process())
        all_done = simpy.AllOf(env, [r.done for r in self.runners])
        with gc_frozen():  # collections walk the run's objects only (simulator._gc)
            if self.exp.time_limit is not None:
                env.run(until=simpy.AnyOf(env, [all_done, env.timeout(self.exp.time_limit)]))
            else:
                env.run(until=all_done)
        for dev in self.system.devices.values():
            dev.finish()
        return self

    def collect(self) -> RunResult:
        """The run's tables and metrics (the policy's own metrics and samples included)."""
        self._enter("collect", "run")
        result = collect_metrics(self.env, self.system, self.jobs, self.runners, self.recorder)
        result.metrics.update(self.policy.metrics(
            result, {job.name: runner.iteration_times
                     for job, runner in zip(self.jobs, self.runners)}))
        samples = self.context.samples
        if samples:
            result.timeseries = pd.concat(
                [result.timeseries, pd.DataFrame(samples, columns=result.timeseries.columns)],
                ignore_index=True)
        result.metrics = {k: float(v) for k, v in result.metrics.items()}
        result.metrics["seed"] = self.seed
        if self._audit is not None:
            result.meta["audit"] = {"iterations": self._audit.iterations,
                                    "kernels": self._audit.kernels}
        result.wall_time_s = time.perf_counter() - self.wall_start
        return result


def simulate(exp: ExperimentSpec, seed: int | None = None, base: Path | None = None,
             traces: dict[int, Trace] | None = None, soc: SocSpec | None = None,
             audit: bool = False) -> RunResult:
    """Run one resolved experiment: build, plan, run and collect. The arguments are
    :class:`Simulation`'s."""
    return Simulation(exp, seed, base, traces, soc, audit).build().plan().run().collect()
