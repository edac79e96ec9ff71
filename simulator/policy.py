"""The policy interface: where each kernel runs, with how many units, in which order.

A policy is a class registered by name in :data:`POLICIES`. Its constructor
takes explicit keyword parameters (they come from the experiment's ``policy:``
mapping, so they can be listed, recorded and swept); their annotations are
their schema, checked on every construction (:mod:`simulator.params`). The
engine then calls

1. :meth:`Policy.bind` once with a :class:`PolicyContext` (processor specs,
   cost estimates, job handles, the run's random generator:
   :mod:`simulator.policy_context`), and
2. :meth:`Policy.plan` once per job (one workload on one device), which returns
   a :class:`Plan`: a :class:`Placement` and a priority for every kernel.

Kernels become ready when their dependencies (and any data transfer between
address spaces) are done; each processor starts its ready kernels in priority
order (lower first). Policies that change their mind at run time (load
changes, network changes) give their plan an ``adapt`` callback: after every
iteration it receives an :class:`IterationReport` (what ran where and when,
what crossed which channel) and may return a new plan for the iterations
started from then on. A policy may also add run metrics (:meth:`Policy.metrics`:
its decisions, stage breakdowns) and time series (:meth:`PolicyContext.record`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .errors import ConfigError
from .params import as_written, check_keywords, validated
from .policy_context import PolicyContext
from .registry import Registry

if TYPE_CHECKING:
    from .trace import Trace

__all__ = ["POLICIES", "IterationReport", "Job", "Placement", "Plan", "Policy",
           "PolicyContext", "make_policy"]

POLICIES: Registry[type[Policy]] = Registry("policy", "socsim.policies")


@dataclass(frozen=True)
class Placement:
    """Where one kernel runs.

    Attributes:
        processor: dotted processor name (``cpu.gold``, ``gpu``, ``dsp``), prefixed
            with ``device:`` for a device other than the job's own.
        units: cores / contexts used.
        share: fraction of each unit (processor sharing between tenants).
        library: kernel library (framework backend) whose efficiency table on the
            processor costs the kernel (``ProcessorSpec.libraries``); None, or a
            library the processor has no table for, uses the processor's own.
        memory_share: fraction of the bandwidth of the memory levels not private
            to its units (shared caches, device memories, DRAM) that the kernel
            gets: ``1/n`` for each of ``n`` sibling parts of a split running side
            by side on different units (see :mod:`simulator.hardware.cost`).
        stream: a software thread: kernels placed with the same stream on the
            same processor run one at a time (across pipelined iterations too),
            e.g. DynO's single packing thread; None: no such constraint.
    """

    processor: str
    units: int = 1
    share: float = 1.0
    library: str | None = None
    memory_share: float = 1.0
    stream: str | None = None


@dataclass
class Plan:
    """A policy's decision for one job: placements and priorities per kernel row.

    A job compiles a plan once, when it first runs it: a policy that switches back
    to a plan passes the same object again, and a changed decision is a new Plan
    (not this one changed in place).

    Attributes:
        placements: one per row of the trace that will run.
        priorities: one per row (lower starts first); row order if empty.
        trace: a rewritten trace to run instead of the job's (kernels split
            across processors, micro-batches, linked operators); None keeps it.
        adapt: called after each iteration that ran under this plan with its
            :class:`IterationReport`; returns a new plan for the iterations
            started from then on, or None to keep this one. None (the default)
            records no reports.
        skip: conditional kernels: ``skip(iteration)`` returns the rows that do not
            run in that iteration (they complete at once, move no data, and their
            dependants go on); None runs every row every iteration. Return equal
            (ideally the same) frozensets for equal iterations: fast-forward keys
            its memo on them.
    """

    placements: list[Placement]
    priorities: list[float] = field(default_factory=list)
    trace: Trace | None = None
    adapt: Callable[[IterationReport], Plan | None] | None = None
    skip: Callable[[int], frozenset[int]] | None = None

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
        max_in_flight: iterations allowed in flight at once (1: back to back; more
            pipelines them: a new iteration starts while earlier ones are still
            in later stages, e.g. on another device).
        pause_every: after every this many iterations the job pauses (0: never).
        pause: length of each pause (s): the device idles (and cools); pauses
            count in the makespan, not in the job's active time.
        fast_forward: repeat memoised iterations instead of simulating every
            kernel while the device's DVFS/thermal state is unchanged (long
            training runs; see :mod:`simulator.engine.fast_forward`), hold a
            steady pipeline's periods (:mod:`simulator.engine.pipeline`) or, on a
            device shared with other jobs, steady frames
            (:mod:`simulator.engine.tenant`).
    """

    name: str
    trace: Trace
    device: str
    iterations: int = 1
    start: float = 0.0
    samples: int = 1
    params: dict = field(default_factory=dict)
    max_in_flight: int = 1
    pause_every: int = 0
    pause: float = 0.0
    fast_forward: bool = False


@dataclass
class IterationReport:
    """What one finished iteration did (for plans that adapt at run time).

    Attributes:
        job: the job.
        iteration: the iteration's index.
        plan: the plan it ran under.
        start: its start time (s).
        end: its end time (s): last kernel done and outputs home.
        kernels: ``(row, processor, start_s, end_s)`` per kernel, rows of the
            plan's trace, processors as in the kernel records (``server:gpu``
            on multi-device systems).
        transfers: ``(channel, bytes, ready_s, start_s, end_s, arrival_s)`` per
            channel crossing: the channel was free for it at ready, busy from
            start (after a radio promotion, if one was needed) to end, and the
            data arrives ``arrival - end`` later (propagation latency).
    """

    job: Job
    iteration: int
    plan: Plan
    start: float
    end: float
    kernels: list[tuple[int, str, float, float]] = field(default_factory=list)
    transfers: list[tuple[str, float, float, float, float, float]] = field(
        default_factory=list)


class Policy:
    """Base class of policies. Subclasses set ``name`` and implement :meth:`plan`.

    ``conformance`` gives the conformance test (run over every registered
    policy) parameters and a workload the policy is meant for; the defaults are
    the policy's default parameters on a small FP32 inference workload.
    """

    name: str = ""
    conformance: dict = {"params": {}, "workload": {"model": "lenet5", "batch": 4}}
    # Whether an overridden :meth:`metrics` reads the run's records
    # (``result.kernels``, ``result.transfers``, every iteration in
    # ``iterations``): if so the run keeps a record per kernel, transfer and
    # iteration even when its outputs write none. A policy whose metrics summarise
    # only its own plan or decisions says False, so that a long run with no
    # per-kernel outputs keeps none (issue 21: a 150-epoch run's memory flat in
    # its batches). A policy that does not override metrics reads none.
    metrics_read_records: bool = True
    # With ``metrics_read_records`` False: whether the metrics still walk every
    # iteration's ``(start, end)`` in ``iterations`` (frame latencies, their
    # percentiles) though they read no kernel or transfer record. The pairs are
    # then kept (16 bytes an iteration) while kernels are only counted: a
    # multi-tenant run of a minute completes ~750 k kernels and ~10 k frames.
    metrics_read_iterations: bool = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # the constructor's annotated signature is the parameters' schema
        # (simulator.params): every construction checks the arguments it is given
        if "__init__" in cls.__dict__:
            cls.__init__ = validated(cls.__dict__["__init__"])

    def bind(self, context: PolicyContext) -> None:
        """Receive the run's context once, before any planning.

        Overrides call ``super().bind(context)`` first (it sets ``self.context``),
        then check what depends on the SoC (named processors exist) and start
        their run-time processes with :meth:`PolicyContext.start`.

        Raises:
            ConfigError: a parameter that does not fit this run's SoC (path
                relative to ``policy``, e.g. ``processor``).
        """
        self.context = context

    def plan(self, job: Job) -> Plan:  # pragma: no cover - abstract
        """Decide where, with how many units and in which order ``job``'s kernels run.

        Called once per job, in workload order, after :meth:`bind` and before
        the simulation starts (simulated time 0); the run's job handles do not
        exist yet. Deterministic given the context's random generator.

        Args:
            job: the job; ``job.trace`` is one iteration's kernel DAG, ``job.device``
                the device whose processors local names refer to.

        Returns:
            a :class:`Plan`: one :class:`Placement` per row of the trace that runs
            (``plan.trace`` if the policy rewrites it, else ``job.trace``), with
            optional priorities (lower starts first), ``adapt`` callback (new
            plans at run time) and ``skip`` (conditional kernels).

        Raises:
            ConfigError: the job cannot be planned with these parameters (an
                unknown processor, a kernel no chosen processor supports); its
                path is relative to ``policy``.
        """
        raise NotImplementedError

    def metrics(self, result, iterations: dict[str, Sequence[tuple[float, float]]]
                ) -> dict[str, float]:
        """Extra metrics of a finished run (decisions, stage breakdowns); none by default.

        Args:
            result: the run's :class:`~simulator.engine.simulation.RunResult`
                (kernel and transfer records, the engine's metrics). A policy
                that overrides this method gets the records even when the
                experiment's outputs write none (``outputs.kernels`` and
                ``outputs.timeline`` false), unless its
                ``metrics_read_records`` is False; others get empty tables then.
                Its time series holds only the policy's own samples when
                ``outputs.timeseries`` and ``outputs.timeline`` are false.
            iterations: ``(start_s, end_s)`` of each completed iteration per job,
                in completion order (a read-only sequence of pairs:
                :class:`~simulator.engine.iterations.IterationLog`; with
                ``metrics_read_records`` False only its length and last pair,
                unless ``metrics_read_iterations`` is True).

        Returns:
            metric name -> value (units in the names); merged into the run's metrics.
        """
        return {}

    def params(self) -> dict:
        """The constructor parameters as given (for records; quantities as written)."""
        import inspect

        names = inspect.signature(type(self).__init__).parameters
        return {n: as_written(getattr(self, n)) for n in names
                if n != "self" and hasattr(self, n)}


def make_policy(config: dict, path: str = "policy") -> Policy:
    """Build a policy from its experiment mapping ``{name: ..., **params}``.

    Raises:
        ConfigError: an unknown policy or parameter, or a value its constructor's
            annotated signature rejects, at ``policy.<param>`` (``path`` prefix).
    """
    if not isinstance(config, dict) or "name" not in config:
        raise ConfigError("needs a 'name' (one of: " + ", ".join(POLICIES.names()) + ")",
                          path=path)
    params = {k: v for k, v in config.items() if k != "name"}
    cls = POLICIES.get(config["name"], path=f"{path}.name")
    check_keywords(cls, params, f"policy {config['name']!r}", path)
    try:
        return cls(**params)
    except ConfigError as err:
        raise err.within(prefix=path) from None
    except (TypeError, ValueError) as err:
        raise ConfigError(str(err), path=path) from None
