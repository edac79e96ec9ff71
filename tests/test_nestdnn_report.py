"""NestDNN's headline comparisons from an alpha sweep (validation/nestdnn/report.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from validation.nestdnn.report import baseline_accuracies, crossing, knee, regain, tradeoffs


def test_the_knee_is_where_the_curve_bulges_most_above_its_chord():
    rates = np.array([10.0, 11.0, 12.0, 20.0, 30.0])
    gains = np.array([5.0, 4.9, 4.7, 3.0, 0.0])
    assert knee(rates, gains) == 3
    assert knee(np.array([10.0, 20.0, 25.0, 27.0, 28.0]),
                np.array([5.0, 4.8, 4.0, 2.0, 0.0])) == 2
    assert crossing(np.array([0.0, 1.0]), np.array([2.0, -2.0]), 0.0) == pytest.approx(0.5)


def test_gains_at_equal_accuracy_and_rate_against_the_baseline():
    rows = [("nestdnn-baseline", 0.01, 10.0, 0.0, 1.0, 1.0)]
    for alpha, rate, gain in ((0.001, 8.0, 4.0), (0.01, 12.0, 2.0), (0.1, 16.0, -2.0)):
        rows.append(("nestdnn-mintotal", alpha, rate, gain, 0.5 + rate / 40, 0.8))
    results = pd.DataFrame(rows, columns=["policy.name", "policy.alpha", "frame_rate_fps",
                                          "accuracy_gain_pct", "energy_per_inference_j",
                                          "app_energy_per_inference_j"])
    row = tradeoffs(results)["MinTotalCost"]
    assert row["rate_gain_at_equal_accuracy"] == pytest.approx(14.0 / 10.0)
    assert row["accuracy_gain_at_equal_rate"] == pytest.approx(3.0)
    assert row["energy_ratio_at_equal_accuracy"] == pytest.approx(0.5 + 14.0 / 40)
    assert row["app_energy_ratio_at_equal_rate"] == pytest.approx(0.8)
    assert row["knee_alpha"] == 0.01


def test_gains_are_re_measured_against_other_baseline_models():
    results = pd.DataFrame({
        "policy.name": ["nestdnn-baseline", "nestdnn-mintotal"],
        "accuracy_gain_pct": [0.0, 1.0],
        "A.serving_s": [10.0, 10.0], "A.accuracy_pct": [80.0, 84.0],
        "B.serving_s": [30.0, 30.0], "B.accuracy_pct": [60.0, 60.0]})
    out = regain(results, {"A": 82.0, "B": 58.0})
    assert list(out["accuracy_gain_pct"]) == pytest.approx([0.0, (10 * 2 + 30 * 2) / 40])


def test_a_larger_drop_ratio_lowers_every_baseline_model_and_one_keeps_the_descendants():
    from workloads.multicapacity.profile import load_profiles

    same, mid, worse = (baseline_accuracies(r) for r in (1.0, 1.5, 2.0))
    for app, profile in load_profiles("nestdnn").items():
        knee = profile.descendants[profile.baseline_knee()].accuracy
        assert same[app] == pytest.approx(100 * knee)  # ratio 1: the descendant curve
        assert worse[app] < mid[app] < same[app]


def test_the_profiles_drop_ratio_is_the_median_of_the_public_measurements():
    from validation.nestdnn.drop_ratio import drop_ratios, median_ratio
    from workloads.multicapacity.profile import read_profile_file

    ratios = drop_ratios()
    assert len(ratios) == 6 and all(1.0 < r < 1.3 for r in ratios.values())
    assert read_profile_file("nestdnn").baseline_drop_ratio == median_ratio()
