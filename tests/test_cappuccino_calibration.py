"""The Cappuccino fit: every phone's RenderScript and Java libraries follow from the
two overheads fitted on the Nexus 5, and the code overhead scales exact-mode time."""

from __future__ import annotations

import pytest

from simulator.library import load_soc
from validation.cappuccino import fit


@pytest.mark.parametrize("phone", fit.PHONES)
def test_every_phone_carries_the_nexus5_overheads(phone):
    code, java = fit.committed_overheads(load_soc("snapdragon800"))
    soc = load_soc(phone)
    for cluster, proc in soc.cpu.items():
        for name, value in fit.library_efficiencies(soc, cluster, code, java).items():
            written = proc.libraries[name].efficiency["default"]
            assert written == pytest.approx(value, rel=2e-3), (phone, cluster, name)


def test_with_overheads_round_trips_and_slows_exact_mode_in_proportion():
    soc = load_soc("snapdragon800")
    code, java = fit.committed_overheads(soc)
    assert fit.committed_overheads(fit.with_overheads(soc, code, java)) == pytest.approx(
        (code, java), rel=1e-12)
    base = fit.run("snapdragon800", "squeezenet1_0", "parallel", soc).metrics["latency_s"]
    slower = fit.run("snapdragon800", "squeezenet1_0", "parallel",
                     fit.with_overheads(soc, 2 * code, java)).metrics["latency_s"]
    # compute-bound scalar code: twice the overhead, nearly twice the time
    assert 1.8 < slower / base <= 2.0
    java_time = fit.run("snapdragon800", "squeezenet1_0", "baseline",
                        fit.with_overheads(soc, 2 * code, java / 2)).metrics["latency_s"]
    assert java_time == pytest.approx(
        fit.run("snapdragon800", "squeezenet1_0", "baseline", soc).metrics["latency_s"],
        rel=1e-9)
