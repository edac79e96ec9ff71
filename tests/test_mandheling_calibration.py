"""Mandheling tools: the Table 7 fit's fast model agrees with the engine, the fitted
knobs act, and the per-batch report compares the right runs."""

from __future__ import annotations

import pytest

from simulator.library import load_soc
from validation.mandheling import fit_mnn as fit


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


def test_the_report_compares_mandheling_with_each_baseline_on_common_models():
    import pandas as pd

    from validation.mandheling.report import gains

    rows = [("p", "mandheling", "a", "ok", 1.0, 1.0), ("p", "mandheling", "b", "ok", 2.0, 1.0),
            ("p", "mnn-fp32", "a", "ok", 3.0, 4.0), ("p", "mnn-fp32", "b", "ok", 2.0, 2.0),
            ("p", "mnn-gpu", "a", "oom", float("nan"), float("nan")),
            ("p", "mnn-gpu", "b", "ok", 1.0, 0.5)]
    results = pd.DataFrame(rows, columns=["soc", "policy.name", "workload.model", "status",
                                          "latency_s", "energy_per_iteration_j"])
    table = gains(results).set_index("baseline")
    assert list(table.index) == ["mnn-fp32", "mnn-gpu"]
    fp32 = table.loc["mnn-fp32"]
    assert (fp32.models, fp32.speedup_min, fp32.speedup_mean, fp32.speedup_max) == (2, 1, 2, 3)
    assert (fp32.energy_reduction_min, fp32.energy_reduction_max) == (2, 4)
    gpu = table.loc["mnn-gpu"]  # the out-of-memory model is left out
    assert (gpu.models, gpu.speedup_mean, gpu.energy_reduction_mean) == (1, 0.5, 0.5)
