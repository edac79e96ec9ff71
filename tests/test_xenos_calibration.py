"""The calibration targets of Cappuccino and Xenos (the registered checks of
``socsim validate --group cappuccino`` and ``--group xenos``): the Nexus 5
single-threaded row and exact parallel column, and the HO-alone reduction ranges
of the TMS320C6678 and the ZCU102."""

from __future__ import annotations

import pytest

from simulator.checks import CHECKS

TARGETS = [name for name in CHECKS.names() if name.startswith(("cappuccino.", "xenos."))
           and CHECKS.get(name).status == "calibration"]
# Misses kept visible (strict xfail: a fix must remove the entry). None: the row-loop cost of
# scalar RenderScript brought AlexNet's exact column from +16 % to within tolerance.
KNOWN_MISSES: set[str] = set()


def test_the_targets_are_registered():
    assert len(TARGETS) == 10
    assert KNOWN_MISSES <= set(TARGETS)
    # the groups and the statuses say the same: fitted figures in the plain groups
    assert {CHECKS.get(name).group for name in TARGETS} == {"cappuccino", "xenos"}


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.xfail(strict=True, reason="one overhead for 3 CNNs"))
    if name in KNOWN_MISSES else name for name in TARGETS])
def test_calibration_target(name):
    check = CHECKS.get(name)
    error = abs(check.simulate() - check.reference) / check.reference * 100
    assert error <= check.tolerance_pct, f"{name}: {error:.1f} % off"
