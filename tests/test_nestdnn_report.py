"""NestDNN's headline comparisons from an alpha sweep (validation/nestdnn/report.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from validation.nestdnn.report import crossing, knee, tradeoffs


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
