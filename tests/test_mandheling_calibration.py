"""The Table 7 fit's fast model agrees with the engine, and the fitted knobs act."""

from __future__ import annotations

import pytest

from simulator.calibration import mandheling_mnn as fit
from simulator.library import load_soc


@pytest.mark.parametrize("method, cpu, cpu_freq", [("mnn-fp32", "big4", "max"),
                                                    ("mnn-int8", "little1", "min"),
                                                    ("mnn-fp32", "all8", "min")])
def test_the_fast_model_is_the_engine_on_the_cpu(method, cpu, cpu_freq):
    soc = load_soc(fit.SOC)
    seconds, _ = fit.simulate_row(soc, method, cpu, cpu_freq)
    assert fit.fast_time(soc, method, cpu, cpu_freq) == pytest.approx(seconds, rel=1e-6)


def test_the_floors_slow_only_the_min_rows_and_the_parameters_round_trip():
    soc = load_soc(fit.SOC)
    efficiency, parallel, power, floors = fit.current(soc)
    same = fit.with_parameters(soc, efficiency, parallel, power, floors)
    for written, read in zip((efficiency, parallel, power, floors), fit.current(same)):
        assert read == pytest.approx(written, rel=1e-12)
    top = {cluster: soc.cpu[cluster].opps[-1].frequency for cluster in floors}
    pinned_high = fit.with_parameters(soc, efficiency, parallel, floors=top)
    assert fit.fast_time(pinned_high, "mnn-fp32", "big1", "min") == pytest.approx(
        fit.fast_time(pinned_high, "mnn-fp32", "big1", "max"), rel=1e-12)
    assert fit.fast_time(soc, "mnn-fp32", "big1", "min") > \
        2 * fit.fast_time(soc, "mnn-fp32", "big1", "max")
