"""The validation registry: reference measurements and how to simulate them.

A check is a function returning the simulated value of one reference figure,
registered with the figure, its unit, its source and a tolerance::

    @check("dsp.conv_cliff.32x32.b8", reference=59.11, unit="ms", tolerance_pct=25,
           source="Mandheling (MobiCom'22) Table 3, Xiaomi 10 (SD865)", group="engine",
           status="calibration")
    def _():
        return simulated_latency_ms(...)

Every check states what the figure is to the simulator (its ``status``):

* ``calibration``: parameters were fitted to this figure (or to the data set it
  summarises); it must pass;
* ``prediction``: nothing was fitted to it; it tests the model;
* ``exception``: a figure the project accepts the model cannot reproduce, with a
  one-line ``reason``; the scoreboard shows its verdict but does not count it.

The status is declared where the check is registered, next to what it was fitted
to, so the scoreboard holds no list of names (``docs/calibration.md`` tabulates
the choices).

Checks whose data lives outside the repo (``../shared/data``) raise
:class:`DataUnavailable`, and are then reported as skipped.
Aggregate checks (a median over cells) are ordinary checks too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .registry import Registry

STATUSES = ("calibration", "prediction", "exception")


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
        status: ``calibration``, ``prediction`` or ``exception`` (see the module).
            The default is ``prediction``: a check that does not say it was fitted
            claims nothing more than a prediction.
        reason: one line; required for an exception (why the figure is accepted
            as missed), optional otherwise (e.g. why a figure was left out of a fit).
        deterministic: the value depends only on the code and data (the default);
            False for a measurement on this host (a wall-clock time), which
            ``socsim validate`` never caches (:mod:`simulator.check_cache`).

    Raises:
        ValueError: an unknown status, an exception without a reason, or a
            reason longer than one line.
    """

    name: str
    reference: float
    unit: str
    tolerance_pct: float
    source: str
    group: str
    simulate: Callable[[], float]
    kind: str = "error"
    status: str = "prediction"
    reason: str = ""
    deterministic: bool = True

    def __post_init__(self) -> None:
        # Checked here, not in the scoreboard: a bad status is a registration bug and
        # must stop the import that registers it, not show up as one odd row.
        if self.status not in STATUSES:
            raise ValueError(f"check {self.name!r}: unknown status {self.status!r}; "
                             f"expected one of {', '.join(STATUSES)}")
        if self.status == "exception" and not self.reason.strip():
            raise ValueError(f"check {self.name!r}: an exception needs a reason")
        if "\n" in self.reason.strip():
            raise ValueError(f"check {self.name!r}: the reason must be one line")


CHECKS: Registry[Check] = Registry("validation check", "socsim.checks")


def check(name: str, *, reference: float, unit: str, tolerance_pct: float, source: str,
          group: str, status: str, reason: str = "", kind: str = "error",
          deterministic: bool = True):
    """Decorator registering a function as the simulator side of a check.

    ``status`` has no default here: every registration says whether its figure
    was fitted (``calibration``), not (``prediction``) or is an accepted miss
    (``exception``, with ``reason``).
    """
    # Built before the decorator is returned, so a bad status fails at the call site.
    spec = dict(reference=reference, unit=unit, tolerance_pct=tolerance_pct, source=source,
                group=group, kind=kind, status=status, reason=reason.strip(),
                deterministic=deterministic)
    Check(name, simulate=lambda: 0.0, **spec)

    def decorator(fn: Callable[[], float]) -> Callable[[], float]:
        CHECKS.register(name)(Check(name, simulate=fn, **spec))
        return fn

    return decorator
