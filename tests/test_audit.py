"""The engine's promises, checked as runs go (simulator.engine.audit).

Regression: a skipped first kernel used to release its successor a second time
(the release loop walked the live dependency counters), which ran kernels
twice, before their dependencies, and ended iterations early.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from conftest import kernel, make_trace, run

from simulator.engine.audit import Audit, InvariantViolation
from simulator.policy import POLICIES, Placement, Plan, Policy


@POLICIES.register("test-skip-first")
class SkipFirst(Policy):
    """Row 0 never runs (a conditional first kernel); rows alternate CPU clusters."""

    name = "test-skip-first"
    conformance = {"params": {}, "workload": {"model": "lenet5", "batch": 1}}

    def plan(self, job):
        cpus = [name for name in self.context.processors(job.device) if name.startswith("cpu.")]
        skip = frozenset({0})
        return Plan([Placement(cpus[row % len(cpus)], 1) for row in range(len(job.trace))],
                    skip=lambda _iteration: skip)


def _skip_first_run(tiny_soc, audit: bool):
    # 0 (skipped) -> 1 -> 3 and 2 -> 3: row 1's count reaches zero while the
    # first kernels are being released, before the loop gets to row 1
    trace = make_trace([kernel(0), kernel(1, "0"), kernel(2), kernel(3, "1 2")])
    return trace, run(tiny_soc, trace, {"name": "test-skip-first"},
                      workload={"trace": "<memory>", "iterations": 3}, audit=audit)


def test_a_skipped_first_kernel_releases_its_successor_once(tiny_soc):
    trace, result = _skip_first_run(tiny_soc, audit=False)
    k = result.kernels
    ran = k.groupby("iteration")["row"].apply(sorted).to_dict()
    assert ran == {0: [1, 2, 3], 1: [1, 2, 3], 2: [1, 2, 3]}
    end = {(r.iteration, r.row): r.end_s for r in k.itertuples()}
    for r in k.itertuples():
        for dep in trace.preds[r.row]:
            if dep != 0:
                assert r.start_s >= end[(r.iteration, dep)] - 1e-12
    # back-to-back iterations: one starts only when the last kernel of the previous ended
    for it in (1, 2):
        assert (k[k.iteration == it]["start_s"].min()
                >= k[k.iteration == it - 1]["end_s"].max() - 1e-12)


def test_the_audit_passes_the_fixed_release(tiny_soc):
    _trace, result = _skip_first_run(tiny_soc, audit=True)
    assert result.metrics["kernels"] == 9


# -- the audit's checks can fail ---------------------------------------------------------

def _state(preds, fanout=None, upload=None, download=None):
    n = len(preds)
    return SimpleNamespace(labels=[f"k{i}" for i in range(n)], preds=preds,
                           fanout=fanout or [[] for _ in range(n)],
                           upload=upload or [[] for _ in range(n)],
                           download=download or [[] for _ in range(n)])


def _check(state, skip=frozenset()):
    return Audit().iteration("job", 0, state, skip, alive=lambda: True)


def test_the_audit_catches_a_kernel_released_twice():
    check = _check(_state([(), (0,)]))
    check.released_kernel(0, 0.0)
    with pytest.raises(InvariantViolation, match="released twice"):
        check.released_kernel(0, 1.0)


def test_the_audit_catches_a_release_before_a_dependency_completed():
    check = _check(_state([(), (0,)]))
    check.released_kernel(0, 0.0)
    with pytest.raises(InvariantViolation, match="before its dependency k0"):
        check.released_kernel(1, 0.5)


def test_the_audit_catches_a_release_before_the_data_arrived():
    route = ["a channel"]
    check = _check(_state([(), (0,)], fanout=[[(route, [1])], []]))
    check.released_kernel(0, 0.0)
    check.done(0, 0.0, 1.0)
    with pytest.raises(InvariantViolation, match="before the data of k0"):
        check.released_kernel(1, 1.0)


def test_the_audit_catches_a_start_before_release_and_a_short_iteration():
    check = _check(_state([(), (0,)]))
    check.released_kernel(0, 1.0)
    with pytest.raises(InvariantViolation, match="before its release"):
        check.done(0, 0.5, 2.0)
    check = _check(_state([(), (0,)]))
    check.released_kernel(0, 0.0)
    check.done(0, 0.0, 1.0)
    with pytest.raises(InvariantViolation, match="1 kernel.s. never run: k1"):
        check.finished(1.0)


def test_the_audit_catches_an_undownloaded_output_and_a_double_booked_lane():
    check = _check(_state([()], download=[["a channel"]]))
    check.released_kernel(0, 0.0)
    check.done(0, 0.0, 1.0)
    with pytest.raises(InvariantViolation, match="before the output of k0"):
        check.finished(1.0)
    audit = Audit()
    audit.lanes("cpu.big", (0, 1), 0.0, 2.0, "a")
    with pytest.raises(InvariantViolation, match="lane 1: b started"):
        audit.lanes("cpu.big", (1,), 1.0, 3.0, "b")


# -- sampled power integrates to energy -------------------------------------------------

def _integral(timeseries, name: str) -> float:
    series = timeseries[timeseries["name"] == name].sort_values("time_s")
    times = [0.0, *series["time_s"]]
    return sum((b - a) * p for a, b, p in zip(times, times[1:], series["value"]))


@pytest.mark.parametrize("period", ["10 ms", "30 ms", "50 ms", "1 s"])
def test_sampled_power_integrates_to_the_energy_at_any_period(tiny_soc, period):
    # a busy then idle, DVFS-driven run: power changes within every sample period
    trace = make_trace([kernel(i, str(i - 1) if i else "", flops=3e8 * (1 + i % 3))
                        for i in range(12)])
    result = run(tiny_soc, trace, {"name": "manual", "default": "cpu.big",
                                   "kernels": {i: "cpu.little" for i in range(0, 12, 4)}},
                 dvfs={"governor": "schedutil"}, outputs={"sample_period": period},
                 workload={"trace": "<memory>", "iterations": 3})
    m, ts = result.metrics, result.timeseries
    assert _integral(ts, "power.total") == pytest.approx(m["energy_j"], rel=1e-9)
    for component in ("cpu.big", "cpu.little", "dsp", "dram", "memory_idle", "base"):
        assert _integral(ts, f"power.{component}") == pytest.approx(
            m[f"energy_{component}_j"], rel=1e-9, abs=1e-15), component


def test_a_long_series_is_thinned_to_a_bounded_size_and_still_integrates(tiny_soc, monkeypatch):
    # Past _MAX_SAMPLES samples, neighbours merge in pairs (mean power over both
    # periods) and every other due sample is taken: the series stays bounded,
    # its last sample is at the end, and it still integrates to every energy.
    import simulator.engine.device as device

    trace = make_trace([kernel(i, str(i - 1) if i else "", flops=3e8 * (1 + i % 3))
                        for i in range(12)])
    args = dict(policy={"name": "single", "processor": "cpu.big", "cores": 1},
                dvfs={"governor": "schedutil"}, workload={"trace": "<memory>", "iterations": 5})
    full = run(tiny_soc, trace, **args, outputs={"sample_period": "10 ms"})
    monkeypatch.setattr(device, "_MAX_SAMPLES", 16)
    thin = run(tiny_soc, trace, **args, outputs={"sample_period": "10 ms"})
    m, ts = thin.metrics, thin.timeseries
    times = sorted(set(ts["time_s"]))
    assert len(set(full.timeseries["time_s"])) > 4 * 16  # thinned at least twice
    assert len(times) <= 16 + 1
    assert times[-1] == pytest.approx(m["makespan_s"])
    assert m == full.metrics  # thinning touches the series only
    assert _integral(ts, "power.total") == pytest.approx(m["energy_j"], rel=1e-9)
    for component in ("cpu.big", "cpu.little", "dram", "base"):
        assert _integral(ts, f"power.{component}") == pytest.approx(
            m[f"energy_{component}_j"], rel=1e-9, abs=1e-15), component
    temps = ts[ts["name"] == "temp.cpu"].set_index("time_s")["value"]
    reference = full.timeseries[full.timeseries["name"] == "temp.cpu"].set_index("time_s")
    for time_ in temps.index[1:]:  # a kept sample's temperature is the sample at its time
        assert temps[time_] == reference["value"][time_]


def test_samples_turned_into_values_by_the_block_are_those_of_one_at_a_time(monkeypatch):
    # A step's sample keeps its raw values and a block of them becomes samples at once
    # (Device._flush, with numpy): the very floats of the sample-at-a-time code (the
    # path of a forced sample), wherever a block ends, also across a thinning. On a
    # phone's SoC: nine energy components, whose running total numpy would add in
    # another order if asked for a sum.
    import simulator.engine.device as device
    from simulator.engine.simulation import simulate
    from simulator.spec.experiment import ExperimentSpec

    trace = make_trace([kernel(i, str(i - 1) if i else "", flops=3e8 * (1 + i % 3))
                        for i in range(12)])
    spec = ExperimentSpec.model_validate({
        "name": "blocks", "soc": "snapdragon865",
        "workload": {"trace": "<memory>", "iterations": 40},
        "policy": {"name": "single", "processor": "cpu.gold", "cores": 3},
        "dvfs": {"governor": "schedutil"}, "outputs": {"sample_period": "10 ms"}})

    def table():
        ts = simulate(spec, traces={0: trace}).timeseries
        return ts["time_s"].tolist(), ts["name"].tolist(), ts["value"].tolist()

    blocks = table()
    record = device.Device._record_sample
    monkeypatch.setattr(device.Device, "_record_sample",
                        lambda self, temps=None, *rest, **named: record(
                            self, temps, *rest, **{**named, "force": True}))
    one_at_a_time = table()
    assert len(set(blocks[0])) > 300 and blocks == one_at_a_time
    monkeypatch.setattr(device.Device, "_record_sample", record)
    monkeypatch.setattr(device, "_MAX_SAMPLES", 40)  # thinned three times
    thinned = [table()]
    for size in (1, 7):  # blocks of other lengths
        monkeypatch.setattr(device, "_PENDING", size)
        thinned.append(table())
    assert thinned[0] == thinned[1] == thinned[2] and len(set(thinned[0][0])) <= 41
