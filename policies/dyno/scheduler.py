"""DynO's scheduler: ordered hard constraints, ordered soft targets, best effort.

Every candidate configuration <s, c> comes with estimated metrics:

=================  ======================================================  =========
metric             meaning                                                 unit
=================  ======================================================  =========
``latency``        one inference, end to end                               s
``throughput``     inferences per second (pipelined: the slowest stage)    1/s
``server_cost``    server execution time per inference                     s
``device_cost``    client execution time per inference (compute + packing) s
``accuracy_drop``  top-1 accuracy lost to quantising the transfer          pp
=================  ======================================================  =========

The scheduler drops the configurations that break the hard constraints, one
constraint at a time in priority order; if none is left it keeps the
configurations closest to feasible (smallest relative violation of each
constraint in turn: best effort). It then ranks the survivors by the soft
targets in order: a target keeps the configurations within ``tie`` (relative)
of its best value, the next target decides among those, and the first
remaining configuration (in candidate order) wins.

In an experiment::

    policy:
      name: dyno
      constraints:
        - {metric: accuracy_drop, max: 1}                  # pp
        - {metric: latency, max: 100 ms}
        - {metric: latency, max: 50 %, relative_to: device-only}
      targets:
        - {metric: server_cost, goal: min}
        - {metric: throughput, goal: max}
        - {metric: latency, goal: value, value: 80 ms}     # closest to
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import ValidationError, model_validator

from simulator.errors import ConfigError
from simulator.spec.base import Strict
from simulator.spec.yamlio import validation_error
from simulator.units import UnitError, parse_quantity

METRICS = ("latency", "throughput", "server_cost", "device_cost", "accuracy_drop")
_TIME_METRICS = ("latency", "server_cost", "device_cost")
Metric = Literal["latency", "throughput", "server_cost", "device_cost", "accuracy_drop"]


def _value(metric: str, raw: Any, relative: bool) -> float:
    """A threshold in SI units (times with units; a fraction when relative)."""
    if relative:
        return parse_quantity(raw, "dimensionless")
    if metric in _TIME_METRICS:
        return parse_quantity(raw, "time")
    return parse_quantity(raw, "dimensionless")


class Constraint(Strict):
    """A hard constraint: ``metric <= max`` or ``metric >= min``.

    Attributes:
        metric: one of the scheduler's metrics.
        max: upper bound (times with units, accuracy drop in pp, throughput per s).
        min: lower bound.
        relative_to: the bound is a fraction (``50 %``) of this configuration's
            estimate (``device-only`` or ``server-only``).
    """

    metric: Metric
    max: Any = None
    min: Any = None
    relative_to: Literal["device-only", "server-only"] | None = None

    @model_validator(mode="after")
    def _bound(self) -> Constraint:
        if (self.max is None) == (self.min is None):
            raise ValueError("give exactly one of 'max' or 'min'")
        try:
            object.__setattr__(self, "max", None if self.max is None else
                               _value(self.metric, self.max, self.relative_to is not None))
            object.__setattr__(self, "min", None if self.min is None else
                               _value(self.metric, self.min, self.relative_to is not None))
        except UnitError as err:
            raise ValueError(str(err)) from None
        return self


class Target(Strict):
    """A soft target: minimise, maximise or approach ``value``."""

    metric: Metric
    goal: Literal["min", "max", "value"]
    value: Any = None

    @model_validator(mode="after")
    def _value_given(self) -> Target:
        if (self.goal == "value") != (self.value is not None):
            raise ValueError("'value' is needed with goal: value, and only then")
        if self.value is not None:
            try:
                object.__setattr__(self, "value", _value(self.metric, self.value, False))
            except UnitError as err:
                raise ValueError(str(err)) from None
        return self


def parse_objectives(constraints: list, targets: list, path: str = ""
                     ) -> tuple[list[Constraint], list[Target]]:
    """Validate the policy parameters; errors name ``constraints[i].<key>``."""
    out = []
    for name, model, items in (("constraints", Constraint, constraints),
                               ("targets", Target, targets)):
        if not isinstance(items, list):
            raise ConfigError(f"must be a list of mappings; got {items!r}",
                              path=f"{path}{name}")
        parsed = []
        for i, item in enumerate(items):
            try:
                parsed.append(model.model_validate(item))
            except ValidationError as err:
                raise validation_error(err, None, f"{path}{name}[{i}]") from None
        out.append(parsed)
    return out[0], out[1]


def _keep_best(values: np.ndarray, alive: np.ndarray, tie: float) -> np.ndarray:
    """The alive entries within ``tie`` (relative) of the smallest alive value."""
    best = values[alive].min()
    return alive & (values <= best + tie * abs(best) + 1e-15)


def choose(estimates: dict[str, np.ndarray], constraints: list[Constraint],
           targets: list[Target], references: dict[str, int] | None = None,
           tie: float = 0.01) -> tuple[int, bool]:
    """Pick a configuration.

    Args:
        estimates: metric -> value per configuration (all the same length).
        constraints: hard constraints in priority order.
        targets: soft targets in priority order.
        references: configuration index of ``device-only`` / ``server-only``
            (for relative constraints).
        tie: relative tolerance under which two values of a target count as equal.

    Returns:
        (index of the chosen configuration, whether it met every constraint).
    """
    count = len(next(iter(estimates.values())))
    alive = np.ones(count, dtype=bool)
    feasible = True
    for c in constraints:
        values = np.asarray(estimates[c.metric], dtype=float)
        bound = c.max if c.max is not None else c.min
        if c.relative_to is not None:
            bound = bound * values[references[c.relative_to]]
        violation = (values - bound) if c.max is not None else (bound - values)
        violation = np.maximum(violation, 0.0) / max(abs(bound), 1e-12)
        ok = alive & (violation <= 0)
        if ok.any():
            alive = ok
        else:  # best effort: the closest to meeting this constraint
            feasible = False
            alive = _keep_best(violation, alive, 0.0)
    for t in targets:
        values = np.asarray(estimates[t.metric], dtype=float)
        if t.goal == "max":
            values = -values
        elif t.goal == "value":
            values = np.abs(values - t.value)
        alive = _keep_best(values, alive, tie)
    return int(np.flatnonzero(alive)[0]), feasible
