"""The policy interface: where each kernel runs, with how many units, in which order.

A policy is a class registered by name in :data:`POLICIES`. Its constructor
takes explicit keyword parameters (they come from the experiment's ``policy:``
mapping, so they can be listed, recorded and swept). The engine then calls

1. :meth:`Policy.bind` once with a :class:`PolicyContext` (the system, cost
   models, the run's random generator), and
2. :meth:`Policy.plan` once per job (one workload on one device), which returns
   a :class:`Plan`: a :class:`Placement` and a priority for every kernel.

Kernels become ready when their dependencies (and any data transfer between
address spaces) are done; each processor starts its ready kernels in priority
order (lower first). Policies that change their mind at run time (load
changes, network changes) start SimPy processes from ``bind``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .errors import ConfigError
from .registry import Registry

if TYPE_CHECKING:
    from .engine.system import System
    from .trace import Trace

POLICIES: Registry[type[Policy]] = Registry("policy")


@dataclass(frozen=True)
class Placement:
    """Where one kernel runs.

    Attributes:
        processor: dotted processor name (``cpu.gold``, ``gpu``, ``dsp``), prefixed
            with ``device:`` for a device other than the job's own.
        units: cores / contexts used.
        share: fraction of each unit (processor sharing between tenants).
    """

    processor: str
    units: int = 1
    share: float = 1.0


@dataclass
class Plan:
    """A policy's decision for one job: placements and priorities per kernel row.

    Attributes:
        placements: one per row of the trace that will run.
        priorities: one per row (lower starts first); row order if empty.
        trace: a rewritten trace to run instead of the job's (kernels split
            across processors, micro-batches, linked operators); None keeps it.
    """

    placements: list[Placement]
    priorities: list[float] = field(default_factory=list)
    trace: Trace | None = None

    def __post_init__(self):
        if not self.priorities:
            self.priorities = [float(i) for i in range(len(self.placements))]


@dataclass
class Job:
    """One workload instance to run: a trace on a device.

    Attributes:
        name: job name (unique in a run).
        trace: the kernel DAG of one iteration.
        device: name of the device the job belongs to.
        iterations: iterations run back to back.
        start: release time (s).
        samples: samples processed per iteration (the batch), for throughput.
        params: the workload's parameters, for policies that need them.
    """

    name: str
    trace: Trace
    device: str
    iterations: int = 1
    start: float = 0.0
    samples: int = 1
    params: dict = field(default_factory=dict)


@dataclass
class PolicyContext:
    """What a policy may look at when planning."""

    system: System
    rng: np.random.Generator

    def cost_model(self, device: str | None = None):
        """The cost model of ``device`` (the first device by default)."""
        return self.system.device(device).cost_model

    def processors(self, device: str | None = None) -> dict:
        """Processor specs of ``device`` by dotted name."""
        return self.system.device(device).spec.processors()

    def duration(self, job: Job, row: int, processor: str, units: int | None = None) -> float:
        """Estimated seconds of kernel ``row`` of ``job`` alone on ``processor`` at
        its top OPP (``inf`` when it cannot run there)."""
        from .hardware.cost import Unsupported

        device, local = self.system.resolve(processor, job.device)
        dev = self.system.devices[device]
        spec = dev.processors[local].spec
        units = spec.units if units is None else units
        try:
            cost = dev.cost_model.kernel_cost(local, units, job.trace.table.iloc[row])
        except Unsupported:
            return float("inf")
        return cost.duration(spec.opps[-1].frequency)

    def transfer_time(self, job: Job, src: str, dst: str, nbytes: float) -> float:
        """Estimated seconds to move ``nbytes`` from processor ``src`` to ``dst`` (idle channels)."""
        route = self.system.route(self.system.resolve(src, job.device),
                                  self.system.resolve(dst, job.device))
        total = 0.0
        for channel in route:
            total += channel.switch + channel.latency + nbytes / channel.bandwidth.at(0.0)
        return total


class Policy:
    """Base class of policies. Subclasses set ``name`` and implement :meth:`plan`.

    ``conformance`` gives the conformance test (run over every registered
    policy) parameters and a workload the policy is meant for; the defaults are
    the policy's default parameters on a small FP32 inference workload.
    """

    name: str = ""
    conformance: dict = {"params": {}, "workload": {"model": "lenet5", "batch": 4}}

    def bind(self, context: PolicyContext) -> None:
        """Receive the run's context before any planning."""
        self.context = context

    def plan(self, job: Job) -> Plan:  # pragma: no cover - abstract
        raise NotImplementedError

    def params(self) -> dict:
        """The constructor parameters (for records)."""
        import inspect

        names = inspect.signature(type(self).__init__).parameters
        return {n: getattr(self, n) for n in names if n != "self" and hasattr(self, n)}


def make_policy(config: dict, path: str = "policy") -> Policy:
    """Build a policy from its experiment mapping ``{name: ..., **params}``."""
    import inspect

    import policies  # noqa: F401  (registers the built-in policies)

    if not isinstance(config, dict) or "name" not in config:
        raise ConfigError("needs a 'name' (one of: " + ", ".join(POLICIES.names()) + ")",
                          path=path)
    params = {k: v for k, v in config.items() if k != "name"}
    cls = POLICIES.get(config["name"], path=f"{path}.name")
    signature = inspect.signature(cls.__init__)
    accepted = [p for p in signature.parameters if p != "self"]
    for key in params:
        if key not in accepted:
            raise ConfigError(f"unknown parameter {key!r} for policy {config['name']!r}; "
                              f"it takes {', '.join(accepted) or 'no parameters'}",
                              path=f"{path}.{key}")
    try:
        return cls(**params)
    except ConfigError as err:
        raise err.within(prefix=path) from None
    except (TypeError, ValueError) as err:
        raise ConfigError(str(err), path=path) from None
