"""Invariants on random DAGs, placements and governors (hypothesis).

* every kernel runs exactly once per iteration;
* no kernel starts before its predecessors end (plus their data transfer);
* no core runs two kernels at once, no processor exceeds its units;
* energy equals the integral of the sampled power;
* temperatures stay finite and never fall below ambient.
"""

from __future__ import annotations

import numpy as np
from conftest import kernel, make_trace, run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

PROCESSORS = {"cpu.big": 2, "cpu.little": 2, "dsp": 1}


@st.composite
def scenarios(draw):
    n = draw(st.integers(1, 14))
    rows, placements, cores = [], {}, {}
    for i in range(n):
        deps = draw(st.lists(st.integers(0, i - 1), max_size=3, unique=True)) if i else []
        proc = draw(st.sampled_from(sorted(PROCESSORS)))
        rows.append(kernel(i, " ".join(map(str, deps)),
                           op=draw(st.sampled_from(["conv", "relu", "fc", "add"])),
                           flops=draw(st.floats(1e5, 5e8)), precision="int8",
                           nbytes=draw(st.floats(1e3, 4e6)), kernel=3, stride=1, batch=1))
        placements[i] = proc
    for proc, units in PROCESSORS.items():
        cores[proc] = draw(st.integers(1, units))
    governor = draw(st.sampled_from(["performance", "powersave", "schedutil"]))
    iterations = draw(st.integers(1, 3))
    return rows, placements, cores, governor, iterations


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                      HealthCheck.function_scoped_fixture])
@given(scenarios())
def test_engine_invariants(tiny_soc, scenario):
    rows, placements, cores, governor, iterations = scenario
    trace = make_trace(rows)
    result = run(tiny_soc, trace, {"name": "manual", "default": "cpu.big",
                                   "kernels": placements, "cores": cores},
                 dvfs={"governor": governor}, workload={"trace": "x", "iterations": iterations},
                 outputs={"sample_period": "10 ms"})
    k = result.kernels

    # each kernel exactly once per iteration
    assert len(k) == len(rows) * iterations
    assert not k.duplicated(["iteration", "row"]).any()

    # dependencies (rows are topologically ordered ids here: id == row)
    end = {(r.iteration, r.row): r.end_s for r in k.itertuples()}
    for r in k.itertuples():
        for dep in trace.preds[r.row]:
            assert r.start_s >= end[(r.iteration, dep)] - 1e-12

    # no lane double-booked, no processor over capacity
    for _, group in k.explode("lanes").groupby(["processor", "lanes"]):
        spans = group.sort_values("start_s")[["start_s", "end_s"]].to_numpy()
        assert np.all(spans[1:, 0] >= spans[:-1, 1] - 1e-12)
    for proc, group in k.groupby("processor"):
        points = sorted([(s, u) for s, u in zip(group.start_s, group.units)] +
                        [(e, -u) for e, u in zip(group.end_s, group.units)],
                        key=lambda p: (p[0], p[1]))
        level = 0
        for _, delta in points:
            level += delta
            assert level <= PROCESSORS[proc]

    # energy = integral of power
    ts = result.timeseries
    power = ts[ts["name"] == "power.total"].sort_values("time_s")
    times = np.concatenate([[0.0], power["time_s"].to_numpy()])
    integral = float(np.sum(np.diff(times) * power["value"].to_numpy()))
    assert np.isclose(integral, result.metrics["energy_j"], rtol=1e-9)
    assert result.metrics["energy_j"] > 0

    # temperatures finite and >= ambient
    temps = ts[ts["name"].str.startswith("temp.")]["value"].to_numpy()
    assert np.all(np.isfinite(temps))
    assert np.all(temps >= tiny_soc.thermal.ambient - 1e-9)
