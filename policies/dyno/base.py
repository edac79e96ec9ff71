"""What the split-inference policies share: placements, candidates, plans, adaptation.

A policy of this family decides, per job, one configuration <s, c> (split
point, bitwidth of the packed transfer) among candidates, turns it into a
plan (:mod:`.plan`) and, when it adapts, watches every finished inference
(:class:`~simulator.policy.IterationReport`): the profiler updates its
scaling factors and network estimates, and when one of them moved by more
than ``reinvoke`` (relative) since the last decision the scheduler runs
again; a different choice becomes the plan of the next inferences.

Placements: ``client`` runs the model's first part (``client_cores`` units, all
by default, minus the packer's core when they share a CPU cluster),
``packer`` packs (default: one core of the job's device's first CPU cluster),
``server`` runs the rest (default ``server:gpu``), ``unpacker`` unpacks (one
core of the server device's first CPU cluster). Packing and unpacking are one
thread each (a placement ``stream``): pipelined frames queue for them. All
four may be on one device (e.g. a phone's CPU and GPU).

The model's kernels (client and server) are PyTorch's (:data:`FRAMEWORK`: DynO's
implementation runs the model in PyTorch): a processor with a ``libraries.pytorch``
table is costed with it, others with their own numbers. Packing and unpacking are
numpy/LZ4 calls, costed with the processor's own numbers.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import numpy as np
from pydantic import Field

from simulator.errors import ConfigError
from simulator.params import PositiveInt
from simulator.policy import IterationReport, Job, Placement, Plan, Policy
from workloads.splits.profile import RAW, SplitProfile

from .plan import Where, build_split
from .profiler import Profiler
from .report import run_metrics

# the kernel library of the model's kernels on the client and the server
FRAMEWORK = "pytorch"

DEFAULT_BITS = (3, 4, 5, 6, 7, 8, 32)
# parameter types shared by the split-inference policies (simulator.params)
Cores = PositiveInt | None
Reinvoke = Annotated[float, Field(ge=0, lt=1)]


@dataclass
class JobState:
    """One job's decisions (per run)."""

    profile: SplitProfile
    where: Where
    configs: list
    profiler: Profiler | None = None
    current: int = 0
    scale: dict = field(default_factory=lambda: {"client": 1.0, "server": 1.0})
    monitored: dict = field(default_factory=dict)
    used: list = field(default_factory=list)  # (iteration, config) per finished iteration
    ends: deque = field(default_factory=lambda: deque(maxlen=11))  # last completions (s)
    invocations: int = 0
    changes: int = 0
    in_flight: int = 1  # the job's max_in_flight (steady-state window)


class SplitInference(Policy):
    """Base of ``dyno``, ``neurosurgeon``, ``device-only``, ``server-only``, ``static-split``.

    Subclasses list their parameters explicitly and call :meth:`_configure`.
    """

    conformance = {"params": {"client": "cpu.gold", "packer": "cpu.silver", "server": "gpu",
                              "unpacker": "cpu.silver"},
                   "workload": {"model": "resnet18", "input_size": 64}}
    adaptive = False
    relu_only = True

    def _configure(self, client: str, client_cores: int | None, packer: str | None,
                   server: str, unpacker: str | None, accuracy_table: str | None,
                   activations: str | None, reinvoke: float = 0.05) -> None:
        self.client, self.client_cores, self.packer = client, client_cores, packer
        self.server, self.unpacker = server, unpacker
        self.accuracy_table, self.activations = accuracy_table, activations
        self.reinvoke = reinvoke
        self._jobs: dict[str, JobState] = {}

    # -- hooks for the subclasses ----------------------------------------------------
    def candidates(self, profile: SplitProfile) -> list:
        """Candidate ``(split, bits)`` pairs; ``bits`` None: nothing to pack."""
        raise NotImplementedError

    def decide(self, state: JobState, estimates: dict[str, np.ndarray] | None) -> int:
        """Index of the configuration to run (``estimates`` None for static policies)."""
        raise NotImplementedError

    # -- placements ----------------------------------------------------------------
    def _first_cpu(self, device: str) -> str:
        return next(n for n in self.context.processors(device) if n.startswith("cpu."))

    def _placement(self, job: Job, processor: str, units: int | None, path: str,
                   stream: str | None = None, library: str | None = None) -> Placement:
        try:
            available = self.context.units(processor, job.device)
        except KeyError as err:
            raise ConfigError(str(err.args[0]), path=path) from None
        units = available if units is None else units
        if not 1 <= units <= available:
            raise ConfigError(f"{processor} has {available} units; {units} requested",
                              path=path)
        return Placement(processor, units, library=library, stream=stream)

    def _where(self, job: Job) -> Where:
        packer = self.packer or self._first_cpu(job.device)
        server_device, _ = self.context.resolve(self.server, job.device) if ":" in self.server \
            else (job.device, self.server)
        unpacker = self.unpacker or (f"{server_device}:{self._first_cpu(server_device)}"
                                     if server_device != job.device
                                     else self._first_cpu(job.device))
        if self.client == self.server:
            raise ConfigError("client and server must be different processors", path="server")
        cores = self.client_cores
        if cores is None and self.client == packer:
            cores = max(1, self.context.units(self.client, job.device) - 1)
        return Where(self._placement(job, self.client, cores, "client", library=FRAMEWORK),
                     self._placement(job, packer, 1, "packer", stream="packing"),
                     self._placement(job, self.server, None, "server", library=FRAMEWORK),
                     self._placement(job, unpacker, 1, "unpacker", stream="unpacking"))

    # -- planning --------------------------------------------------------------------
    def plan(self, job: Job) -> Plan:
        profile = SplitProfile(job.trace, job.params.get("model"), self.relu_only,
                               Path(self.accuracy_table) if self.accuracy_table else None,
                               Path(self.activations) if self.activations else None)
        where = self._where(job)
        configs = self.candidates(profile)
        state = JobState(profile, where, configs, in_flight=job.max_in_flight)
        if self.adaptive:
            state.profiler = Profiler(self.context, job, profile, where, configs,
                                      jpeg_bytes=getattr(self, "_jpeg_bytes", None))
        self._jobs[job.name] = state
        state.current = self._invoke(job, state)
        return self._plan_for(job, state, state.current)

    def invoke(self, job: Job) -> int:
        """Run the scheduler once for a planned job, as it runs at run time (the
        profiler's estimates for every candidate, then the constraint and target
        selection); returns the chosen configuration's index. What DynO reports as
        its own cost (``validation.dyno.overhead`` times it)."""
        return self._invoke(job, self._jobs[job.name])

    def _invoke(self, job: Job, state: JobState) -> int:
        estimates = None
        if state.profiler is not None:
            estimates = state.profiler.estimates(state.scale, self.context.now,
                                                 job.max_in_flight)
            state.monitored = self._monitored(state)
        state.invocations += 1
        return self.decide(state, estimates)

    def _monitored(self, state: JobState) -> dict[str, float]:
        return {**{f"sf.{k}": v for k, v in state.scale.items()},
                **state.profiler.snapshot(self.context.now)}

    def _plan_for(self, job: Job, state: JobState, k: int) -> Plan:
        split, bits = state.configs[k]
        jpeg = getattr(self, "_jpeg_bytes", None)
        built = build_split(job.trace, state.profile, split,
                            RAW if bits is None else bits, state.where,
                            jpeg(split) if jpeg is not None else None)
        if state.profiler is not None:
            state.profiler.set_plan(k, built)
        return Plan(built.placements, trace=built.trace,
                    adapt=lambda report: self._adapt(job, state, k, report))

    def _adapt(self, job: Job, state: JobState, k: int, report: IterationReport) -> Plan | None:
        state.used.append((report.iteration, k))
        split, bits = state.configs[k]
        self.context.record("policy.split", split.index)
        self.context.record("policy.bits", 0 if bits is None else bits)
        self.context.record("policy.latency", report.end - report.start)
        state.ends.append(report.end)
        if len(state.ends) > 1 and state.ends[-1] > state.ends[0]:
            self.context.record("policy.throughput", (len(state.ends) - 1)
                                / (state.ends[-1] - state.ends[0]))
        if state.profiler is None:
            return None
        state.profiler.observe(report, k, state.scale)
        now = self.context.now
        for name, channel in self._links().items():
            self.context.record(f"{name}.bandwidth_mbps", channel.bandwidth.at(now) * 8e-6)
        monitored = self._monitored(state)
        if all(abs(value - state.monitored.get(key, value))
               <= self.reinvoke * abs(state.monitored.get(key, value))
               for key, value in monitored.items()):
            return None
        choice = self._invoke(job, state)
        if choice == state.current:
            return None
        state.current = choice
        state.changes += 1
        return self._plan_for(job, state, choice)

    def _links(self) -> dict:
        """Network channels of the system by name."""
        return self.context.links()

    # -- metrics -----------------------------------------------------------------------
    def metrics(self, result, iterations) -> dict[str, float]:
        out: dict[str, float] = {}
        for name, state in self._jobs.items():
            used = Counter(k for _, k in state.used) or Counter([state.current])
            k = used.most_common(1)[0][0]
            split, bits = state.configs[k]
            profiler = state.profiler
            flops = (profiler.device_flops if profiler is not None else None)
            out.update({
                "split": split.index, "split_fraction": split.fraction,
                "bits": 0 if bits is None else bits,
                "accuracy_drop_pp": 0.0 if bits is None else state.profile.drop(split, bits),
                "candidates": len(state.profile.candidates),
                "scheduler_invocations": state.invocations, "config_changes": state.changes,
            })
            if flops is not None:
                out["server_flops_saved"] = float(np.mean([flops[c] for _, c in state.used])
                                                  if state.used else flops[k])
            else:
                total = float(state.profile.trace.table["flops"].sum())
                done = float(state.profile.trace.table["flops"].iloc[:split.index].sum())
                out["server_flops_saved"] = done / total if total else 0.0
            out.update(run_metrics(result, iterations.get(name, []), self.context,
                                   name, state.where, self._links(), state.in_flight))
        return out
