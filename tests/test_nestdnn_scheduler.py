"""NestDNN's cost function and greedy schedulers (policies/nestdnn/scheduler.py)."""

from __future__ import annotations

import itertools
import math

import pytest

from policies.nestdnn.scheduler import (
    Allocation,
    CachedScheduler,
    Demand,
    Option,
    allocate,
    cost,
    max_cost,
    total_cost,
)
from simulator.errors import ConfigError


def app(name: str, scale: float = 1.0, goal: float = 0.05) -> Demand:
    """Five descendants: bigger is more accurate, slower and larger."""
    options = tuple(Option(accuracy=a, latency=scale * lat, memory=mem) for a, lat, mem in (
        (0.80, 0.02, 10e6), (0.84, 0.04, 20e6), (0.87, 0.08, 40e6), (0.89, 0.12, 60e6),
        (0.90, 0.16, 80e6)))
    return Demand(name, options, min_accuracy=0.90, max_latency=goal)


def test_cost_adds_accuracy_shortfall_and_weighted_latency_excess():
    demand = app("a")
    small, large = demand.options[0], demand.options[-1]
    assert cost(large, 1.0, demand, alpha=1.0) == pytest.approx(0.16 - 0.05)
    assert cost(small, 1.0, demand, alpha=1.0) == pytest.approx(0.10)  # meets the goal
    assert cost(small, 0.2, demand, alpha=0.5) == pytest.approx(0.10 + 0.5 * (0.1 - 0.05))
    assert cost(large, 0.0, demand, alpha=0.1) == math.inf
    assert cost(large, 0.0, demand, alpha=0.0) == 0.0  # alpha 0: latency does not matter


@pytest.mark.parametrize("objective", ["total", "max"])
def test_every_unit_is_given_and_every_app_runs(objective):
    demands = [app("a"), app("b", 2.0), app("c", 0.5)]
    allocation = allocate(demands, alpha=0.1, objective=objective)
    assert sum(allocation.units.values()) == 100
    assert min(allocation.units.values()) >= 1
    assert allocation.evaluations > 0


def test_memory_limits_the_descendants():
    demands = [app("a"), app("b"), app("c")]
    allocation = allocate(demands, alpha=0.0, memory=100e6)
    used = sum(d.options[allocation.descendant[d.name]].memory for d in demands)
    assert used <= 100e6
    assert allocate(demands, alpha=0.0).descendant == {"a": 4, "b": 4, "c": 4}


def test_latency_weight_trades_accuracy_for_speed():
    demands = [app("a"), app("b", 2.0)]
    accurate = allocate(demands, alpha=0.0)
    fast = allocate(demands, alpha=10.0)
    assert all(fast.descendant[n] < accurate.descendant[n] for n in ("a", "b"))


def test_mintotal_greedy_is_optimal_for_fixed_models():
    """With one descendant per app the cost is convex in the share: greedy = optimum."""
    demands = [Demand(n, (Option(0.9, lat, 1.0),), 0.9, 0.01)
               for n, lat in (("a", 0.05), ("b", 0.2), ("c", 0.1))]
    units = 20
    greedy = allocate(demands, alpha=1.0, total_units=units)
    best = min(sum(cost(d.options[0], u / units, d, 1.0) for d, u in zip(demands, split))
               for split in itertools.product(range(1, units), repeat=3) if sum(split) == units)
    assert total_cost(greedy) == pytest.approx(best)


def test_minmax_lowers_the_worst_cost_minimal_lowers_the_sum():
    demands = [app("a"), app("b", 3.0), app("c", 0.3)]
    mintotal = allocate(demands, alpha=0.5, objective="total")
    minmax = allocate(demands, alpha=0.5, objective="max")
    assert max_cost(minmax) <= max_cost(mintotal) + 1e-12
    assert total_cost(mintotal) <= total_cost(minmax) + 1e-12


def test_cached_scheduler_resumes_from_the_cache_and_refreshes():
    demands = [app("a"), app("b", 2.0), app("c", 0.5), app("d", 4.0)]
    scheduler = CachedScheduler("total", fraction=0.7, refresh_every=3)
    full = scheduler.decide(demands, 0.1)
    cached = scheduler.decide(demands, 0.1)
    assert cached.evaluations < full.evaluations / 2
    assert sum(cached.units.values()) == 100
    scheduler.decide(demands, 0.1)
    assert scheduler.full_runs == 1
    scheduler.decide(demands, 0.1)  # the third reuse is a full allocation again
    assert scheduler.full_runs == 2
    # a different set of apps is another cache entry
    scheduler.decide(demands[:2], 0.1)
    assert scheduler.full_runs == 3


def test_bad_arguments_are_config_errors():
    with pytest.raises(ConfigError, match="objective"):
        allocate([app("a")], 0.1, objective="sum")
    with pytest.raises(ConfigError, match="alpha"):
        allocate([app("a")], -1.0)
    with pytest.raises(ConfigError, match="fraction"):
        CachedScheduler(fraction=1.0)


def test_allocation_share():
    assert Allocation(units={"a": 25}, total_units=100).share("a") == 0.25


def test_relative_latency_cost_counts_each_app_on_its_own_scale():
    # In seconds, a slow app's excess dwarfs a fast one's and the greedy feeds it;
    # in units of each app's goal, equal relative slowdowns cost the same.
    fast = Demand("fast", app("f").options, 0.90, max_latency=0.02, latency_unit=0.02)
    slow = Demand("slow", tuple(Option(o.accuracy, 10 * o.latency, o.memory)
                                for o in fast.options), 0.90, max_latency=0.2,
                  latency_unit=0.2)
    assert cost(fast.options[0], 0.5, fast, 1.0) == pytest.approx(
        cost(slow.options[0], 0.5, slow, 1.0))
    seconds = [Demand(d.name, d.options, d.min_accuracy, d.max_latency) for d in (fast, slow)]
    in_seconds = allocate(seconds, alpha=1.0)
    relative = allocate([fast, slow], alpha=1.0)
    assert in_seconds.units["slow"] > 2 * in_seconds.units["fast"]
    assert abs(relative.units["slow"] - relative.units["fast"]) <= 2
