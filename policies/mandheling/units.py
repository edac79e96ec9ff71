"""The co-scheduler's units: one per operator, one per rescaling site.

A rescaling site (an operator writing INT32, its ReduceMax and its Shift,
:mod:`.rescaling`) runs on one processor as a whole: its static-scale
alternative is placed with the operator, and splitting it across the CPU and
the DSP would move its INT32 accumulators over the link twice. The dynamic
programme therefore sees the site as one unit (:func:`build_units`), with its
expected cost per batch on *each* side (:func:`site_cost`): the dynamic version
(operator + ReduceMax + Shift; on a ``range_retry`` DSP library the Shift is the
operator's re-run) in the share of batches the layer rescales, the static
version (the operator with the Shift fused, INT8 output; on a ``range_retry``
library the re-run) in the others. Switching processor inside a site is not an
option; switching before it costs what its operator reads. What the DP
optimises is then the plan the policy emits: no kernel is moved after it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .co_scheduling import chain_latency


@dataclass
class Units:
    """The chain the dynamic programme places.

    Attributes:
        spans: record indices of each unit (consecutive, in record order).
        cpu: expected seconds per batch of each unit on the CPU pool.
        dsp: expected seconds per batch on the DSP (inf: cannot run there).
        switch: seconds to change processor between unit ``u`` and ``u + 1``.
    """

    spans: list[list[int]]
    cpu: list[float]
    dsp: list[float]
    switch: list[float]

    def expand(self, placement: list[str]) -> list[str]:
        """The target of every record under a placement of the units."""
        out: list[str] = []
        for where, span in zip(placement, self.spans):
            out.extend([where] * len(span))
        return out

    def latency(self, placement: list[str], cpu: list[float] | None = None,
                dsp: list[float] | None = None) -> float:
        """Seconds of the chain under ``placement`` (the DP's objective), with
        other per-unit costs if given (e.g. including weight copies)."""
        return chain_latency(placement, self.cpu if cpu is None else cpu,
                             self.dsp if dsp is None else dsp, self.switch)


@dataclass
class Schedule:
    """A placement of the units and what it costs.

    Attributes:
        units: the chain placed.
        placement: ``"cpu"`` or ``"dsp"`` per unit.
        cpu, dsp: the units' costs the placement was optimised with (the weight
            updates' including the copies this placement needs).
        seconds: the chain's latency under the placement with those costs.
    """

    units: Units
    placement: list[str]
    cpu: list[float]
    dsp: list[float]
    seconds: float


def site_cost(dynamic: list[float], static: float, share: float) -> float:
    """Expected seconds per batch of a rescaling site on one side.

    Args:
        dynamic: seconds of the operator, its ReduceMax and its Shift there.
        static: seconds of the static-scale version there.
        share: share of batches in which the layer rescales (0..1).
    """
    if share >= 1.0:
        return sum(dynamic)
    if share <= 0.0:
        return static
    total = sum(dynamic)
    if math.isinf(total) or math.isinf(static):
        return math.inf
    return share * total + (1.0 - share) * static


def build_units(count: int, sites: list[tuple[int, int, int]], cpu: list[float],
                dsp: list[float], static_cpu: list[float], static_dsp: list[float],
                share: list[float], switch: list[float]) -> Units:
    """The units of a chain of ``count`` records.

    Args:
        count: records in the chain.
        sites: (operator, ReduceMax, Shift) record indices of each rescaling
            site, consecutive (``op``, ``op + 1``, ``op + 2``: the policy's sites come
            from :func:`.rescaling.find_groups`, which raises on any other; checked
            there only, where the error can name the kernels).
        cpu, dsp: seconds of each record on each side (the Shift on the DSP as
            it runs there: the re-run on a ``range_retry`` library).
        static_cpu, static_dsp: seconds of each site's static version per side.
        share: share of batches each site rescales in.
        switch: seconds to change processor before record ``i + 1``.
    """
    first = {op: index for index, (op, _, _) in enumerate(sites)}
    spans, unit_cpu, unit_dsp, unit_switch = [], [], [], []
    i = 0
    while i < count:
        if i:
            unit_switch.append(switch[i - 1])
        site = first.get(i)
        if site is None:
            spans.append([i])
            unit_cpu.append(cpu[i])
            unit_dsp.append(dsp[i])
            i += 1
            continue
        span = [i, i + 1, i + 2]
        spans.append(span)
        unit_cpu.append(site_cost([cpu[k] for k in span], static_cpu[site], share[site]))
        unit_dsp.append(site_cost([dsp[k] for k in span], static_dsp[site], share[site]))
        i += 3
    return Units(spans, unit_cpu, unit_dsp, unit_switch)
