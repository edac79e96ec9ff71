"""What a policy sees of a run: :class:`PolicyContext`.

The context is a narrow facade over the engine. A policy reads the hardware
(processor specs, units, SoC descriptions, cost estimates, routes), starts its
own SimPy processes, drives jobs at run time through
:class:`~simulator.engine.job_handle.JobHandle` s, reads a device's storage,
pins governors and records time series, all through the methods below. Times
are simulated seconds, sizes bytes.

``context.system`` (devices, links, cost models) is the engine's own object:
policies do not use it; the methods here cover what they need (``cost_model``
for per-kernel cost queries, ``duration``/``transfer_time`` for estimates).
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .engine.job_handle import JobHandle
from .errors import ConfigError

if TYPE_CHECKING:
    import simpy

    from .engine.dvfs import Governor
    from .engine.links import Channel
    from .engine.storage import Storage
    from .engine.system import System
    from .hardware.cost import CostModel
    from .policy import Job
    from .spec.soc import ProcessorSpec, SocSpec


@dataclass
class PolicyContext:
    """What a policy may look at and do (see the module docstring).

    Attributes:
        system: the engine's devices and links (not for policies: use the methods).
        rng: the run's random generator; spawn a child stream
            (``rng.spawn(1)[0]``) rather than drawing from it directly.
        samples: ``(time_s, name, value)`` recorded by :meth:`record`.
    """

    system: System
    rng: np.random.Generator
    samples: list[tuple[float, str, float]] = field(default_factory=list)
    # job name -> JobHandle, set by the engine after planning, before the run starts
    _handles: dict[str, JobHandle] = field(default_factory=dict, init=False, repr=False)

    def attach(self, runners: dict) -> None:
        """Engine side: make a handle for every job's runner (job name -> runner)."""
        self._handles = {name: JobHandle(runner) for name, runner in runners.items()}

    # -- time and processes ----------------------------------------------------
    @property
    def _env(self) -> simpy.Environment:
        return self.system.device().env

    @property
    def now(self) -> float:
        """Current simulated time (s)."""
        return self._env.now

    def start(self, generator: Generator) -> simpy.Process:
        """Start a SimPy process (a policy's run-time loop: app lifecycles, camera
        feeds). Call it from :meth:`~simulator.policy.Policy.bind`; the process
        first runs when the simulation starts, after every job was planned."""
        return self._env.process(generator)

    def timeout(self, delay: float) -> simpy.Event:
        """An event ``delay`` seconds from now (``yield`` it in a process)."""
        return self._env.timeout(delay)

    def event(self) -> simpy.Event:
        """A fresh event for a process to wait on (``event.succeed()`` triggers it)."""
        return self._env.event()

    # -- jobs at run time ---------------------------------------------------------
    def job(self, name: str) -> JobHandle:
        """The handle of job ``name`` (suspend, resume, stop, abort, set_share,
        replan, on_iteration, pace).

        Raises:
            RuntimeError: before the run starts (handles exist once every job is planned).
            KeyError: no such job.
        """
        if not self._handles:
            raise RuntimeError("job handles exist once the run starts: use them from a "
                               "process started with context.start()")
        return self._handles[name]

    def jobs(self) -> list[JobHandle]:
        """Handles of every job, in workload order (empty before the run starts)."""
        return list(self._handles.values())

    # -- devices and processors ------------------------------------------------
    @property
    def default_device(self) -> str:
        """Name of the experiment's own device (the first)."""
        return self.system.default

    def devices(self) -> list[str]:
        """Names of the run's devices, the default first."""
        return list(self.system.devices)

    def soc(self, device: str | None = None) -> SocSpec:
        """The SoC description of ``device`` (the default device if None)."""
        return self.system.device(device).spec

    def processors(self, device: str | None = None) -> dict[str, ProcessorSpec]:
        """Processor specs of ``device`` by dotted local name (``cpu.gold``, ``dsp``)."""
        return self.system.device(device).spec.processors()

    def require_processor(self, name: str, device: str | None = None,
                          path: str = "processor") -> ProcessorSpec:
        """The spec of local processor ``name`` of ``device`` (a policy parameter).

        Raises:
            ConfigError: no such processor on that SoC (at ``path``, the parameter).
        """
        specs = self.processors(device)
        if name not in specs:
            raise ConfigError(f"unknown processor {name!r}; this SoC has "
                              f"{', '.join(specs)}", path=path)
        return specs[name]

    def resolve(self, processor: str, device: str | None = None) -> tuple[str, str]:
        """``(device, local name)`` of ``processor`` (``server:gpu`` or a local name on
        ``device``, the default device if None).

        Raises:
            KeyError: an unknown device or processor (the message names what exists).
        """
        return self.system.resolve(processor, device)

    def processor_spec(self, processor: str, device: str | None = None) -> ProcessorSpec:
        """The spec of ``processor`` (as for :meth:`resolve`): OPPs, units, offload..."""
        dev, local = self.system.resolve(processor, device)
        return self.system.devices[dev].processors[local].spec

    def units(self, processor: str, device: str | None = None) -> int:
        """Cores / contexts of ``processor`` (as for :meth:`resolve`)."""
        return self.processor_spec(processor, device).units

    def kernel_processor(self, processor: str, device: str | None = None) -> str:
        """The name ``processor`` has in kernel records and time series
        (``server:gpu`` on multi-device systems, ``gpu`` otherwise)."""
        dev, local = self.system.resolve(processor, device)
        return self.system.devices[dev].processors[local].name

    def storage(self, device: str | None = None) -> Storage | None:
        """The flash storage of ``device`` (None if its SoC describes none):
        ``storage.read(nbytes, done, label)`` pages data in, calling ``done`` after."""
        return self.system.device(device).storage

    def pin_governor(self, processor: str, governor: Governor,
                     device: str | None = None) -> None:
        """Replace the DVFS governor of ``processor``'s frequency domain with
        ``governor`` (a :class:`~simulator.engine.dvfs.Governor`, e.g.
        ``Performance()``) from now on: a framework pinning CPU frequencies."""
        dev, local = self.system.resolve(processor, device)
        self.system.devices[dev].set_governor(local, governor)

    # -- estimates -------------------------------------------------------------
    def cost_model(self, device: str | None = None) -> CostModel:
        """The cost model of ``device`` (the default device if None): per-kernel
        costs with any units, library or memory share (``kernel_cost``)."""
        return self.system.device(device).cost_model

    def duration(self, job: Job, row: int | dict, processor: str, units: int | None = None,
                 library: str | None = None) -> float:
        """Estimated seconds of kernel ``row`` of ``job`` (a row index of its trace,
        or a row mapping of a rewritten trace) alone on ``processor`` at its top OPP,
        with ``units`` (all if None) and ``library``'s kernels (``inf`` when it
        cannot run there)."""
        from .hardware.cost import Unsupported

        device, local = self.system.resolve(processor, job.device)
        dev = self.system.devices[device]
        spec = dev.processors[local].spec
        units = spec.units if units is None else units
        record = job.trace.table.iloc[row] if isinstance(row, (int, np.integer)) else row
        try:
            cost = dev.cost_model.kernel_cost(local, units, record, library)
        except Unsupported:
            return float("inf")
        return cost.duration(spec.opps[-1].frequency)

    def route(self, src: str, dst: str, device: str | None = None) -> list[Channel]:
        """Channels data crosses from processor ``src`` to ``dst`` (names as for
        :meth:`resolve`); read their bandwidth and latency, do not send on them."""
        return self.system.route(self.system.resolve(src, device),
                                 self.system.resolve(dst, device))

    def links(self) -> dict[str, Channel]:
        """Network channels between devices by name (``link.phone-server``)."""
        return {channel.name: channel for channel in self.system.links.values()}

    def transfer_time(self, job: Job, src: str, dst: str, nbytes: float) -> float:
        """Estimated seconds to move ``nbytes`` from processor ``src`` to ``dst`` (idle
        channels and ports)."""
        total = 0.0
        for channel in self.route(src, dst, job.device):
            total += (channel.switch + channel.latency_at(0.0) + nbytes
                      / min(channel.bandwidth.at(0.0), channel.port_bandwidth()))
        return total

    # -- records ----------------------------------------------------------------
    def record(self, name: str, value: float) -> None:
        """Add a time-series sample ``name`` = ``value`` at the current time (a
        policy's decisions over time; shown like ``temp.*`` series)."""
        self.samples.append((self.now, name, float(value)))
