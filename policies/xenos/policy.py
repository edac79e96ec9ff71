"""``xenos``: Xenos' dataflow-centric optimisations on a multi-core DSP.

``horizontal`` switches the DSP-aware operator split on (else the vanilla
library's row split, :mod:`.dos`), ``vertical`` the fused operators and
operator linking (:mod:`.linking`); both off is the paper's Vanilla, horizontal
alone its HO, both its HO+VO. The access order of the vanilla library sets
every kernel's ``read_stride`` (:mod:`.layouts`); without vertical
optimisation every feature map goes through external memory between operators
(``spill``, :mod:`.linking`). Operators run one after
another, each on all the units.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from simulator.params import PositiveInt, PositiveSeconds
from simulator.policy import POLICIES, Job, Plan, Policy

from ..rewrite import Rewriter
from ..split import serialize
from .dos import config_for, emit_operator
from .layouts import annotate
from .linking import fuse, link, spill_all
from .traffic import traffic_samples


def prepare(trace, vertical: bool, tiles: int):
    """The operator-level trace Xenos splits: serialised, with the vanilla
    library's read strides, or fused and linked when ``vertical``."""
    trace = serialize(trace)
    if vertical:
        return link(fuse(trace), tiles)
    strides, _ = annotate(trace)
    table = trace.table.copy()
    table["read_stride"] = strides
    table["spill"] = spill_all(trace)
    from simulator.trace import trace_from_table

    return trace_from_table(table, source=f"{trace.source} (vanilla layouts)")


# share of each unit's private memory given to weights
L2Fraction = Annotated[float, Field(gt=0, le=1)]


@POLICIES.register("xenos")
class Xenos(Policy):
    """Xenos on one device's multi-unit processor.

    Args:
        processor: the processor whose units share the work (the DSP).
        horizontal: DSP-aware operator split (else the vanilla row split).
        vertical: fused operators and operator linking.
        units: units to use (all if None).
        l2_fraction: share of each unit's private memory given to weights (the
            rest holds feature-map tiles).
        traffic_period: if given (``"100 us"``), add time series ``traffic.<level>``
            (B/s) of the memory levels, binned at this period (:mod:`.traffic`).
    """

    name = "xenos"
    conformance = {"params": {"processor": "cpu.silver", "traffic_period": "1 ms"},
                   "workload": {"model": "lenet5", "batch": 1}}

    def __init__(self, processor: str = "dsp", horizontal: bool = True, vertical: bool = True,
                 units: PositiveInt | None = None, l2_fraction: L2Fraction = 0.5,
                 traffic_period: PositiveSeconds | None = None):
        self.processor = processor
        self.horizontal = bool(horizontal)
        self.vertical = bool(vertical)
        self.units = units
        self.l2_fraction = float(l2_fraction)
        self.traffic_period = traffic_period
        self._period = seconds(traffic_period)
        self._plans: dict[str, Plan] = {}

    def plan(self, job: Job) -> Plan:
        spec = self.context.require_processor(self.processor, job.device)
        cfg = config_for(spec, self.context.soc(job.device), self.units,
                         self.horizontal, self.l2_fraction)
        trace = prepare(job.trace, self.vertical, cfg.units)
        rw = Rewriter(trace)
        for row in range(len(trace)):
            rw.finish(row, emit_operator(rw, rw.record(row), rw.inputs(row), self.processor,
                                         cfg))
        label = ("HO" if self.horizontal else "vanilla") + ("+VO" if self.vertical else "")
        new_trace, placements = rw.build(f"xenos {label}")
        plan = self._plans[job.name] = Plan(placements, trace=new_trace)
        return plan

    def metrics(self, result, iterations) -> dict[str, float]:
        add_traffic(self.context, result, self._plans, self._period)
        return {}


def seconds(period: float | None) -> float | None:
    """A parsed ``traffic_period`` as a plain float (None stays None)."""
    return None if period is None else float(period)


def add_traffic(context, result, plans: dict[str, Plan], period: float | None) -> None:
    """Append each planned job's memory-traffic series to the run's time series."""
    if period is None:
        return
    kernels = result.kernels
    for job, plan in plans.items():
        handles = {handle.name: handle for handle in context.jobs()}
        device = handles[job].device if job in handles else context.default_device
        context.samples.extend(traffic_samples(kernels[kernels["job"] == job],
                                               plan.placements, plan.trace, context,
                                               device, period))
