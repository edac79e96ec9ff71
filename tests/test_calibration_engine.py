"""The engine's calibration targets (issue: engine, SoC descriptions, cost model).

These run the same registered checks as ``socsim validate``; per-cell rows of
the conv table are informative there, the median is the target here.
"""

from __future__ import annotations

import pytest

from simulator.checks import CHECKS

TARGETS = [
    "sd865.dsp.conv64.median_abs_error",
    # a failing calibration check, reported by socsim validate: the model gives 8x8 b64 and
    # 32x32 b4 one latency (measured 1.84 / 2.50 ms), so least squares leaves this ratio at
    # +31 % (docs/mandheling.md, "The DSP conv table"); strict: a fix must remove the mark
    pytest.param("sd865.dsp.conv64.cliff_ratio_32x32", marks=pytest.mark.xfail(
        strict=True, reason="missing mechanism: 8x8 b64 vs 32x32 b4 (docs/mandheling.md)")),
    "sd865.unfriendly.transpose.cpu", "sd865.unfriendly.transpose.dsp",
    "sd865.unfriendly.weight_rotate.cpu", "sd865.unfriendly.weight_rotate.dsp",
    "sd865.unfriendly.slice.cpu", "sd865.unfriendly.slice.dsp",
    "sd865.cpu_dsp_switch",
    "sd865.thermal.time_to_68c", "sd865.thermal.big_core_cap",
]


@pytest.mark.parametrize("name", TARGETS)
def test_engine_calibration_target(name):
    check = CHECKS.get(name)
    assert check.status == "calibration"
    simulated = check.simulate()
    if check.kind == "max":
        assert simulated <= check.reference
    else:
        error = abs(simulated - check.reference) / check.reference * 100
        assert error <= check.tolerance_pct, f"{name}: {simulated:.3g} vs {check.reference}"


def test_the_batch_cliff_comes_from_padding_and_cache():
    """b=4 -> b=8 at 32x32 jumps ~24x in the measurements; the model must jump
    far more than the 2x of the batch alone."""
    from validation.engine.checks import conv_cell_ms

    assert conv_cell_ms(32, 8) / conv_cell_ms(32, 4) > 10
    assert conv_cell_ms(8, 8) / conv_cell_ms(8, 4) < 3  # small inputs still fit the L2
