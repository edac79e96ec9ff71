"""MNN training on the SD855: the LeNet calibration checks pass, and the mechanisms behind them.

The checks need the data folder (``$SOCSIM_DATA_DIR``, default ``../shared/data``);
they are skipped without it.
"""

from __future__ import annotations

import dataclasses

import pytest

from simulator.checks import CHECKS
from simulator.hardware.cost import CostModel
from simulator.library import load_soc
from validation import training
from validation.training import checks as _checks  # noqa: F401  (registers them)

NAMES = [name for name in CHECKS.names() if name.startswith("sd855.mnn.lenet.")]


@pytest.fixture(scope="module")
def data():
    try:
        return training.load()
    except training.DataMissing as err:
        pytest.skip(f"on-device-training data not present: {err}")


def test_every_row_has_a_check():
    # 9 times (3 set-ups x 3 batches) and the 3 energies at 1.7088 GHz
    assert len(NAMES) == 12


@pytest.mark.parametrize("name", NAMES)
def test_lenet_calibration_check_passes(data, name):
    check = CHECKS.get(name)
    simulated = check.simulate()
    error = 100 * abs(simulated / check.reference - 1)
    assert check.status == "calibration"
    assert error <= check.tolerance_pct, f"{name}: {simulated:.3g} vs {check.reference:.3g}"


def test_a_spin_waiting_pool_burns_power_while_it_waits():
    """MNN's pool spins: its per-operator cost runs at wait_activity, not stall."""
    soc = load_soc("snapdragon855")
    model = CostModel(soc)
    kernel = dict(op="add", pass_="fwd", precision="fp32", flops=1e3, bytes_in=4e3,
                  bytes_out=4e3, weight_bytes=0.0)
    spinning = model.cost("cpu.gold", 3, library="mnn", **kernel)
    frequency = 1.7088e9
    stall = soc.cpu["gold"].power.stall_activity
    assert spinning.overhead > 0.9 * spinning.duration(frequency)  # mostly framework work
    assert spinning.activity(frequency, stall) > 0.95
    assert dataclasses.replace(spinning, wait_activity=None).activity(frequency, stall) < 0.6
