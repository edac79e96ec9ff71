"""The calibration targets of Cappuccino and Xenos (the registered checks of
``socsim validate --group cappuccino`` and ``--group xenos``): the Nexus 5
single-threaded row, exact parallel column and imprecise column, and the HO-alone
reduction ranges of the TMS320C6678 and the ZCU102."""

from __future__ import annotations

import pytest

from simulator.checks import CHECKS

TARGETS = [name for name in CHECKS.names() if name.startswith(("cappuccino.", "xenos."))
           and CHECKS.get(name).status == "calibration"]
# Misses kept visible (strict xfail: a fix must remove the entry). The Nexus 5 imprecise
# column (calibration since issue 19, nothing fitted to it): the paper's AlexNet and GoogLeNet
# gain 1.13x and 1.07x from imprecise mode, SqueezeNet 8x; the modelled vector code gains 4.7x
# and 6.3x (-76 %, -84 %: no sourced mechanism found that leaves two CNNs at scalar speed,
# docs/cappuccino_xenos.md, limitation 10) and 6.2x for SqueezeNet (+33 % at 15 %).
# The SqueezeNet energy ratio (calibration since session 8, nothing fitted to it): 11.1 against
# 7.81, +42 % (docs/cappuccino_xenos.md).
KNOWN_MISSES: set[str] = {f"cappuccino.nexus5.{model}.imprecise"
                          for model in ("alexnet", "squeezenet1_0", "googlenet")} | {
    "cappuccino.nexus5.squeezenet1_0.energy_ratio"}
MISS_REASON = ("Nexus 5 imprecise column and SqueezeNet energy ratio: not fitted, "
               "no sourced mechanism closes them")


def test_the_targets_are_registered():
    assert len(TARGETS) == 14
    assert KNOWN_MISSES <= set(TARGETS)
    # the groups and the statuses say the same: fitted figures in the plain groups
    assert {CHECKS.get(name).group for name in TARGETS} == {"cappuccino", "xenos"}


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=MISS_REASON))
    if name in KNOWN_MISSES else name for name in TARGETS])
def test_calibration_target(name):
    check = CHECKS.get(name)
    error = abs(check.simulate() - check.reference) / check.reference * 100
    assert error <= check.tolerance_pct, f"{name}: {error:.1f} % off"


def test_the_xenos_checks_simulate_each_configuration_once(monkeypatch):
    # the min and max checks of a board share one simulation per (model, configuration)
    from validation.xenos import checks, refs
    calls = []

    def latency(model, config, soc_spec=None, soc=refs.SOC):
        calls.append((model, config, soc))
        return {"vanilla": 3.0, "HO": 2.0, "HO+VO": 1.0}[config]

    monkeypatch.setattr(checks.calibration, "latency_s", latency)
    checks._ho_cuts.cache_clear()
    try:
        assert checks._fpga_ho() == (100.0 * (1 - 2 / 3),) * len(refs.MODELS)
        assert checks._fpga_ho() == (100.0 * (1 - 2 / 3),) * len(refs.MODELS)
        checks._ho()
        checks._ho()
        assert len(calls) == len(set(calls)) == 2 * 2 * len(refs.MODELS)
    finally:
        checks._ho_cuts.cache_clear()
