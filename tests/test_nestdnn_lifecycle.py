"""The app lifecycle benchmark (workloads/lifecycle.py)."""

from __future__ import annotations

import numpy as np
import pytest

from workloads.lifecycle import (
    KILL,
    PRIORITY,
    START,
    Lifecycle,
    concurrency_shares,
    fit_start_probability,
    stationary_shares,
)

APPS = ("VC", "RI-50", "RI-100", "VS", "VG", "RP")
PAPER = [9.8, 12.7, 18.6, 24.5, 34.3]


def test_schedules_keep_two_to_six_distinct_apps():
    lifecycle = Lifecycle(apps=APPS, p_start=0.58, p_priority=0.2)
    for seed in range(20):
        running: set[str] = set()
        for event in lifecycle.schedule(np.random.default_rng(seed)):
            if event.kind == START:
                assert event.app not in running
                running.add(event.app)
            elif event.kind == KILL:
                running.remove(event.app)
            else:
                assert event.kind == PRIORITY and event.app in running
            if event.time > 0:
                assert 2 <= len(running) <= 6


def test_same_seed_same_schedule():
    lifecycle = Lifecycle(apps=APPS, p_start=0.58)
    first = lifecycle.schedule(np.random.default_rng(3))
    assert first == lifecycle.schedule(np.random.default_rng(3))
    assert first != lifecycle.schedule(np.random.default_rng(4))


def test_stationary_shares_are_geometric():
    shares = stationary_shares(0.6, 5)
    assert shares.sum() == pytest.approx(1.0)
    assert shares[1:] / shares[:-1] == pytest.approx(np.full(4, 1.5))


def test_fit_recovers_the_start_probability_and_matches_the_paper():
    assert fit_start_probability(stationary_shares(0.55, 5)) == pytest.approx(0.55, abs=1e-6)
    p = fit_start_probability(PAPER)
    assert np.abs(100 * stationary_shares(p, 5) - PAPER).max() < 0.7


def test_time_shares_of_100_simulations_are_near_the_paper():
    lifecycle = Lifecycle(apps=APPS, p_start=fit_start_probability(PAPER))
    total = np.zeros(5)
    for seq in np.random.SeedSequence(0).spawn(100):
        shares = concurrency_shares(lifecycle.schedule(np.random.default_rng(seq)), 60.0,
                                    range(2, 7))
        assert sum(shares.values()) == pytest.approx(1.0)
        total += np.array(list(shares.values()))
    assert np.abs(total - PAPER).max() < 3.0  # percentage points (100 x 1 % per simulation)


def test_bad_lifecycles_are_config_errors():
    from simulator.errors import ConfigError

    with pytest.raises(ConfigError, match="p_start"):
        Lifecycle(apps=APPS, p_start=1.0)
    with pytest.raises(ConfigError, match="max_apps"):
        Lifecycle(apps=APPS[:3], p_start=0.5, max_apps=6)
