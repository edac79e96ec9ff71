"""The validation registry: reference measurements and how to simulate them.

A check is a function returning the simulated value of one reference figure,
registered with the figure, its unit, its source and a tolerance::

    @check("dsp.conv_cliff.32x32.b8", reference=59.11, unit="ms", tolerance_pct=25,
           source="Mandheling (MobiCom'22) Table 3, Xiaomi 10 (SD865)", group="engine")
    def _():
        return simulated_latency_ms(...)

Checks whose data lives outside the repo (``../shared/data``) raise
:class:`DataUnavailable`, and are then reported as skipped.
Aggregate checks (a median over cells) are ordinary checks too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .registry import Registry


class DataUnavailable(Exception):
    """A check cannot run because its input data is not on this machine."""


@dataclass(frozen=True)
class Check:
    """One reference figure.

    Attributes:
        name: unique dotted name (``dsp.batch_cliff.median``).
        reference: the measured value.
        unit: its unit.
        tolerance_pct: allowed |error| in percent.
        source: citation of the measurement.
        group: which issue/system the check belongs to (engine, workloads, mandheling...).
        simulate: returns the simulated value in ``unit``.
        kind: ``error`` (|sim - ref| / ref within tolerance) or ``max`` (sim <= ref,
            for aggregate error checks where the reference is the allowed maximum).
    """

    name: str
    reference: float
    unit: str
    tolerance_pct: float
    source: str
    group: str
    simulate: Callable[[], float]
    kind: str = "error"


CHECKS: Registry[Check] = Registry("validation check", "socsim.checks")


def check(name: str, *, reference: float, unit: str, tolerance_pct: float, source: str,
          group: str, kind: str = "error"):
    """Decorator registering a function as the simulator side of a check."""

    def decorator(fn: Callable[[], float]) -> Callable[[], float]:
        CHECKS.register(name)(Check(name, reference, unit, tolerance_pct, source, group, fn,
                                    kind))
        return fn

    return decorator
