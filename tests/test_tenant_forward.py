"""Fast-forward of jobs sharing a device (simulator.engine.tenant): steady frames
held one at a time, against kernel level."""

from __future__ import annotations

import pytest
from conftest import act_on, kernel, make_trace

from simulator.engine.simulation import Simulation
from simulator.engine.tenant import Profile
from simulator.policy import POLICIES, Placement, Plan, Policy
from simulator.spec.experiment import ExperimentSpec

# what must agree with kernel level: frames' times to float rounding, energy to the
# rounding of a frame's profile sums
_METRICS = ("makespan_s", "energy_j", "energy_cpu.big_j", "energy_dram_j", "peak_temp_c",
            "a.latency_s", "b.latency_s")


class _Tenants(Policy):
    """Two apps on the big cluster's two units: ``a`` at share 0.5, ``b`` at 0.3."""

    name = "test-tenants"

    def plan(self, job):
        share = 0.5 if job.name == "a" else 0.3
        return Plan(placements=[Placement("cpu.big", 2, share)] * len(job.trace))


class _Meddler(_Tenants):
    """``a`` gets share 0.25 at 1.5 s, runs on the little cluster from 2.5 s (a new
    plan), is suspended and its frame aborted at 3.5 s, resumed at 3.8 s."""

    name = "test-tenant-meddler"

    def bind(self, context):
        super().bind(context)
        act_on(context, "a", [
            (1.5, lambda job: job.set_share(0.25)),
            (1.0, lambda job: job.replan(Plan(placements=[Placement("cpu.little", 1, 1.0)]
                                              * len(job.job.trace)))),
            (1.0, lambda job: (job.suspend(), job.abort())),
            (0.3, lambda job: job.resume())])


def _run(soc, fast_forward: bool, policy: str = "test-tenants", iterations: int = 400,
         governor: str = "performance"):
    """Apps ``a`` (a 4-kernel chain, its DRAM traffic at the end) and ``b`` (3
    kernels) sharing the big cluster; returns the run (simulated, collected)."""
    a = make_trace([kernel(0, flops=4e7, nbytes=1e4), kernel(1, "0", flops=2e7),
                    kernel(2, "1", flops=1e7, nbytes=2e6), kernel(3, "2", flops=1e6,
                                                                   nbytes=8e6)])
    b = make_trace([kernel(0, flops=3e7), kernel(1, "0", flops=3e7, nbytes=1e6),
                    kernel(2, "1", flops=5e6)])
    spec = ExperimentSpec.model_validate({
        "name": "tenants", "soc": "tiny", "dvfs": {"governor": governor},
        "workload": [{"name": name, "trace": "x", "iterations": iterations,
                      "fast_forward": fast_forward} for name in ("a", "b")],
        "outputs": {"timeline": False, "kernels": False, "sample_period": "100 ms"},
        "policy": {"name": policy}})
    sim = Simulation(spec, traces={0: a, 1: b}, soc=soc).build().plan().run()
    sim.result = sim.collect()
    return sim


def _same_run(fast, slow, rel: float = 1e-9) -> None:
    for key in _METRICS:
        assert fast.result.metrics[key] == pytest.approx(slow.result.metrics[key],
                                                         rel=rel), key
    for quick, exact in zip(fast.runners, slow.runners):
        assert len(quick.iteration_times) == len(exact.iteration_times)
        assert quick.control.aborted == exact.control.aborted
        assert [end for _s, end in quick.iteration_times] == pytest.approx(
            [end for _s, end in exact.iteration_times], rel=rel)


@pytest.fixture
def tenants(monkeypatch):
    monkeypatch.setitem(POLICIES._entries, "test-tenants", _Tenants)
    monkeypatch.setitem(POLICIES._entries, "test-tenant-meddler", _Meddler)


def test_steady_tenants_are_held_frame_by_frame_as_kernel_level_runs_them(tiny_soc,
                                                                          tenants):
    fast, slow = _run(tiny_soc, True), _run(tiny_soc, False)
    assert all(runner.tenant.held > 350 for runner in fast.runners)  # of 400 frames each
    assert fast.result.metrics["replayed_iterations"] == sum(
        runner.tenant.held for runner in fast.runners)
    assert fast.result.metrics["kernels"] < slow.result.metrics["kernels"] / 5
    _same_run(fast, slow)


def test_a_throttle_cuts_the_held_frames_and_their_rest_runs_at_kernel_level(hot_soc,
                                                                            tenants):
    # the big cluster's trip at 34 C caps its OPP (the ``hot`` SoC) and lifts it again:
    # each change of OPP cuts the frame held then
    fast = _run(hot_soc, True, iterations=3000)
    slow = _run(hot_soc, False, iterations=3000)
    assert slow.result.metrics["min_freq_cpu.big_hz"] < 2e9  # it throttled
    assert all(runner.tenant.cuts >= 2 for runner in fast.runners)
    assert all(runner.tenant.held > 2000 for runner in fast.runners)
    _same_run(fast, slow, rel=1e-6)


def test_schedutil_sees_held_frames_as_it_sees_their_kernels(hot_soc, tenants):
    fast = _run(hot_soc, True, iterations=1500, governor="schedutil")
    slow = _run(hot_soc, False, iterations=1500, governor="schedutil")
    assert all(runner.tenant.held > 500 for runner in fast.runners)
    _same_run(fast, slow, rel=1e-6)


def test_a_policy_changing_the_run_during_holds(tiny_soc, tenants):
    # a share change cuts the held frame (its rest at the new share), a new plan
    # leaves the frame in progress on its own plan, an abort drops it
    fast = _run(tiny_soc, True, policy="test-tenant-meddler")
    slow = _run(tiny_soc, False, policy="test-tenant-meddler")
    held = fast.runners[0].tenant
    assert held.cuts >= 1 and held.held > 200
    assert slow.runners[0].control.aborted == 1
    _same_run(fast, slow, rel=1e-6)


def test_a_profile_draws_what_its_kernels_drew_when_they_drew_it():
    # two kernels side by side, then one, then an idle tail to the frame's end
    profile = Profile([(0.0, 2.0, 1.0, 3.0, 10.0, (1, 1.0)),
                       (1.0, 3.0, 1.0, 1.0, 0.0, (1, 1.0))], period=4.0)
    assert profile.at(0.0) == (0.0, 0.0)
    assert profile.at(1.5) == pytest.approx((3.0 * 1.5 + 0.5, 15.0))
    assert profile.at(3.0) == pytest.approx((6.0 + 2.0, 20.0))
    assert profile.at(4.0) == profile.at(3.5) == pytest.approx((8.0, 20.0))
    assert profile.at(9.0) == pytest.approx((8.0, 20.0))  # nothing after the frame
