"""The calibration targets of Cappuccino and Xenos (the registered checks of
``socsim validate --group cappuccino`` and ``--group xenos``): the Nexus 5
single-threaded row and the TMS320C6678's HO-alone reduction range."""

from __future__ import annotations

import pytest

from simulator.validation import CHECKS

TARGETS = [name for name in CHECKS.names() if CHECKS.get(name).group in ("cappuccino", "xenos")]


def test_the_targets_are_registered():
    assert len(TARGETS) == 5


@pytest.mark.parametrize("name", TARGETS)
def test_calibration_target(name):
    check = CHECKS.get(name)
    error = abs(check.simulate() - check.reference) / check.reference * 100
    assert error <= check.tolerance_pct, f"{name}: {error:.1f} % off"
