"""NestDNN's run-time scheduler: descendant and compute share per app.

For app ``v`` with accuracy goal ``A_min(v)`` and latency goal ``L_max(v)``,
descendant ``m`` (accuracy ``A(m)``, latency ``L(m)`` at full compute) and
compute share ``u`` in (0, 1], the cost is (Fang et al., MobiCom'18, eq. 3)::

    C(m, u, v) = max(0, A_min(v) - A(m)) + alpha * max(0, L(m) / u - L_max(v))

with accuracy as a fraction; ``alpha`` trades latency for accuracy.
Optionally each app's cost is multiplied by its priority. The paper does not
say in what unit latency enters next to a unitless accuracy; a demand's
``latency_unit`` says (1 s: latency in seconds; its own goal ``L_max(v)``:
latency in units of the app's goal, so that no app's milliseconds weigh
more than another's: the default of the NestDNN policies, ``latency_cost:
relative``).

* **MinTotalCost** minimises the sum of costs, **MinMaxCost** the largest
  cost, both subject to the apps' memory ``sum S(m_v) <= S_max`` and
  ``sum u_v <= 1``. Both are hard, so NestDNN allocates compute greedily in
  indivisible units (1 %) from zero (one unit each to start with, so no
  running app stalls): MinTotalCost gives the next unit to the app whose
  best-descendant cost falls the most; MinMaxCost gives it to the app with the
  highest cost (the highest whose cost the unit lowers: a unit that cannot
  help the costliest app goes on to the next). After each unit the receiving
  app takes the descendant of least cost at its new share that fits in the
  memory the others leave. Ties go to the app with fewer units, then to the
  earlier app.
* :class:`CachedScheduler` starts from a cached partial allocation (the first
  70 % of the units of the last full allocation for the same running apps) and
  runs a full allocation every ``refresh_every`` decisions so the cache does
  not drift.

Everything here is plain Python on small tuples: the scheduler's decision time
is measured by ``benchmarks/nestdnn_scheduler.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from simulator.errors import ConfigError

OBJECTIVES = ("total", "max")


@dataclass(frozen=True)
class Option:
    """One descendant as the scheduler sees it.

    Attributes:
        accuracy: top-1 accuracy (fraction).
        latency: inference latency with the whole compute (s).
        memory: memory it occupies (bytes).
    """

    accuracy: float
    latency: float
    memory: float


@dataclass(frozen=True)
class Demand:
    """One running app's descendants and goals.

    Attributes:
        name: the app.
        options: its descendants, smallest first.
        min_accuracy: accuracy goal ``A_min`` (fraction).
        max_latency: latency goal ``L_max`` (s).
        priority: weight of its cost (1 = normal).
        latency_unit: seconds per unit of latency cost (1: seconds; ``max_latency``:
            latency relative to the app's goal).
    """

    name: str
    options: tuple[Option, ...]
    min_accuracy: float
    max_latency: float
    priority: float = 1.0
    latency_unit: float = 1.0


@dataclass
class Allocation:
    """A scheduling decision.

    Attributes:
        descendant: index of the chosen descendant per app.
        units: compute units per app (share = units / total units).
        cost: cost per app at its share and descendant.
        total_units: units the compute was divided into.
        evaluations: cost-function evaluations spent (a machine-independent
            measure of the decision's work).
        feasible: False when even the smallest descendants exceed the memory.
    """

    descendant: dict[str, int] = field(default_factory=dict)
    units: dict[str, int] = field(default_factory=dict)
    cost: dict[str, float] = field(default_factory=dict)
    total_units: int = 100
    evaluations: int = 0
    feasible: bool = True

    def share(self, app: str) -> float:
        """Compute share of ``app`` in [0, 1]."""
        return self.units[app] / self.total_units


def cost(option: Option, share: float, demand: Demand, alpha: float) -> float:
    """NestDNN's cost of running ``option`` at compute ``share`` (see module docstring)."""
    accuracy = max(0.0, demand.min_accuracy - option.accuracy)
    if alpha == 0.0:
        return demand.priority * accuracy
    if share <= 0.0:
        return math.inf
    return demand.priority * (accuracy + alpha * max(0.0, option.latency / share
                                                     - demand.max_latency)
                              / demand.latency_unit)


class _State:
    """Greedy state: units, descendant and cost per app, and the memory in use."""

    def __init__(self, demands: Sequence[Demand], alpha: float, total_units: int,
                 memory: float, start: dict[str, int] | None):
        self.demands = list(demands)
        self.alpha = alpha
        self.total = total_units
        self.memory = memory
        # Every running app gets at least one unit: with none it would stall.
        self.units = [max(1, int((start or {}).get(d.name, 0))) for d in self.demands]
        # An app without a descendant yet reserves its smallest one.
        self.choice = [0] * len(self.demands)
        self.cost = [0.0] * len(self.demands)
        self.evaluations = 0
        self.feasible = sum(d.options[0].memory for d in self.demands) <= memory + 1e-6
        for i in range(len(self.demands)):
            self.choice[i], self.cost[i] = self.best(i, self.units[i])

    def used_memory(self, skip: int) -> float:
        return sum(d.options[c].memory for j, (d, c) in enumerate(zip(self.demands, self.choice))
                   if j != skip)

    def best(self, i: int, units: int) -> tuple[int, float]:
        """Least-cost descendant of app ``i`` at ``units`` that fits the memory left."""
        demand = self.demands[i]
        room = self.memory - self.used_memory(i)
        share = units / self.total
        best, best_cost = 0, math.inf
        for k, option in enumerate(demand.options):
            if k and option.memory > room + 1e-6:
                continue
            c = cost(option, share, demand, self.alpha)
            self.evaluations += 1
            # Ties prefer the larger (more accurate) descendant.
            if c < best_cost or (c == best_cost and option.accuracy >= demand.options[best]
                                 .accuracy):
                best, best_cost = k, c
        return best, best_cost

    def give(self, i: int) -> None:
        self.units[i] += 1
        self.choice[i], self.cost[i] = self.best(i, self.units[i])

    def allocation(self) -> Allocation:
        names = [d.name for d in self.demands]
        return Allocation(descendant=dict(zip(names, self.choice)),
                          units=dict(zip(names, self.units)),
                          cost=dict(zip(names, self.cost)), total_units=self.total,
                          evaluations=self.evaluations, feasible=self.feasible)


def allocate(demands: Sequence[Demand], alpha: float, objective: str = "total",
             memory: float = math.inf, total_units: int = 100,
             start: dict[str, int] | None = None) -> Allocation:
    """Greedy NestDNN allocation of compute units and descendants.

    Args:
        demands: the running apps.
        alpha: the latency-vs-accuracy knob, >= 0.
        objective: ``total`` (MinTotalCost) or ``max`` (MinMaxCost).
        memory: memory available to the apps' models (bytes).
        total_units: indivisible units of compute (100 = 1 % each).
        start: units already given per app (the cached partial allocation).

    Returns:
        the allocation (descendant, units and cost per app).
    """
    if objective not in OBJECTIVES:
        raise ConfigError(f"objective must be one of {', '.join(OBJECTIVES)}; got "
                          f"{objective!r}", path="objective")
    if alpha < 0:
        raise ConfigError(f"alpha must be >= 0; got {alpha!r}", path="alpha")
    names = [d.name for d in demands]
    if len(set(names)) != len(names):
        raise ValueError("app names must be unique")
    state = _State(demands, alpha, total_units, memory, start)
    _run(state, objective, total_units - sum(state.units))
    return state.allocation()


def _run(state: _State, objective: str, steps: int) -> None:
    """Give ``steps`` units one by one by the objective's rule."""
    pick = _most_improved if objective == "total" else _costliest
    for _ in range(steps if state.demands else 0):
        state.give(pick(state))


def _costliest(state: _State) -> int:
    """MinMaxCost's pick: the costliest app whose cost can still fall.

    A unit that cannot lower the costliest app's cost (its latency goal is met,
    or ``alpha`` is 0) would be wasted on it, so it goes to the next costliest
    app that it helps, or, when it helps none, to the app with fewest units.
    """
    order = sorted(range(len(state.demands)),
                   key=lambda i: (-state.cost[i], state.units[i], i))
    for i in order:
        if state.best(i, state.units[i] + 1)[1] < state.cost[i]:
            return i
    return min(order, key=lambda i: (state.units[i], i))


def _most_improved(state: _State) -> int:
    """MinTotalCost's pick: the app whose cost falls most with one more unit."""
    best, key = 0, None
    for i in range(len(state.demands)):
        _, after = state.best(i, state.units[i] + 1)
        before = state.cost[i]
        gain = math.inf if math.isinf(before) and not math.isinf(after) else before - after
        candidate = (gain, -state.units[i], -i)
        if key is None or candidate > key:
            best, key = i, candidate
    return best


def total_cost(allocation: Allocation) -> float:
    """Sum of the apps' costs."""
    return sum(allocation.cost.values())


def max_cost(allocation: Allocation) -> float:
    """Largest app cost (0 with no apps)."""
    return max(allocation.cost.values(), default=0.0)


class CachedScheduler:
    """NestDNN's cached greedy: resume from a partial allocation.

    A full allocation from zero remembers where its first ``fraction`` of the
    units went, keyed by the set of running apps and their priorities. The
    next decision for the same set starts from that partial allocation and
    only allocates the rest; after ``refresh_every - 1`` such decisions the
    next one is full again and refreshes the cache, so it does not drift
    (``refresh_every = 1``: always full).

    Args:
        objective: ``total`` or ``max``.
        fraction: part of the compute taken from the cache (0.7 = 70 %).
        refresh_every: decisions per app set between full allocations.
        total_units: units of compute.
        capacity: app sets remembered (the oldest is forgotten first).
    """

    def __init__(self, objective: str = "total", fraction: float = 0.7,
                 refresh_every: int = 10, total_units: int = 100, capacity: int = 128):
        if not 0.0 <= fraction < 1.0:
            raise ConfigError(f"cache fraction must be in [0, 1); got {fraction!r}",
                              path="cache_fraction")
        if not isinstance(refresh_every, int) or refresh_every < 1:
            raise ConfigError("refresh_every must be an integer >= 1", path="refresh_every")
        self.objective = objective
        self.fraction = fraction
        self.refresh_every = refresh_every
        self.total_units = total_units
        self.capacity = capacity
        self.cache: dict[tuple, list] = {}  # key -> [partial units, uses since refresh]
        self.decisions = 0
        self.full_runs = 0

    def decide(self, demands: Sequence[Demand], alpha: float,
               memory: float = math.inf) -> Allocation:
        """Allocate for ``demands`` (full or from the cache, see the class docstring)."""
        self.decisions += 1
        key = (alpha, memory, frozenset((d.name, d.priority) for d in demands))
        entry = self.cache.get(key)
        if entry is None or entry[1] >= self.refresh_every - 1 or self.fraction == 0.0:
            self.full_runs += 1
            allocation, partial = self._full(demands, alpha, memory)
            self.cache.pop(key, None)
            self.cache[key] = [partial, 0]
            while len(self.cache) > self.capacity:
                self.cache.pop(next(iter(self.cache)))
            return allocation
        entry[1] += 1
        return allocate(demands, alpha, self.objective, memory, self.total_units,
                        start=entry[0])

    def _full(self, demands: Sequence[Demand], alpha: float, memory: float
              ) -> tuple[Allocation, dict[str, int]]:
        # Run the first units, remember them as the cache, then finish the allocation.
        head = _allocate_units(demands, alpha, self.objective, memory, self.total_units,
                               round(self.fraction * self.total_units))
        rest = allocate(demands, alpha, self.objective, memory, self.total_units,
                        start=head.units)
        rest.evaluations += head.evaluations
        return rest, dict(head.units)


def _allocate_units(demands: Sequence[Demand], alpha: float, objective: str, memory: float,
                    total_units: int, units: int) -> Allocation:
    """The greedy stopped after ``units`` units (the cacheable head of an allocation)."""
    state = _State(demands, alpha, total_units, memory, None)
    _run(state, objective, units)
    return state.allocation()
