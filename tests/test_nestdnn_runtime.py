"""Run-time job control (simulator.engine.control): apps starting, stopping, resharing.

A policy drives jobs from its own SimPy process through ``context.job(name)``:
suspend/resume/stop/abort, ``set_share`` (running kernels re-timed) and
``replan``. Each test scripts one scenario on the tiny SoC's two big cores.
"""

from __future__ import annotations

import pytest
from conftest import kernel, make_trace

from simulator.engine.simulation import simulate
from simulator.policy import POLICIES, Placement, Plan, Policy
from simulator.spec.experiment import ExperimentSpec

# one 2-core kernel of 4e9 FLOP: 8 FLOP/cycle x 0.5 x (1 + 1) cores x 2 GHz = 16 GFLOP/s
LONG = 4e9
SECONDS = 0.25


class Scripted(Policy):
    """Every kernel on both big cores; ``script(context)`` runs as a process at time 0."""

    name = "scripted"

    def __init__(self, script=None, share: float = 1.0):
        self.script = script
        self.share = share

    def bind(self, context):
        super().bind(context)
        context.start(self.script(context))

    def plan(self, job):
        return Plan([Placement("cpu.big", 2, self.share)] * len(job.trace))


@pytest.fixture
def scripted(monkeypatch):
    monkeypatch.setitem(POLICIES._entries, "scripted", Scripted)


def run(tiny_soc, traces: dict, script, iterations: int = 1, share: float = 1.0):
    workloads = [{"name": f"j{i}", "trace": "<memory>", "iterations": iterations}
                 for i in range(len(traces))]
    exp = ExperimentSpec.model_validate({
        "name": "t", "soc": "tiny", "workload": workloads,
        "policy": {"name": "scripted", "script": script, "share": share},
        "dvfs": {"governor": "performance"}, "thermal": {"governor": False}})
    return simulate(exp, traces=traces, soc=tiny_soc)


def one_kernel():
    return make_trace([kernel(0, flops=LONG, nbytes=0)])


def test_a_suspended_job_starts_when_resumed(tiny_soc, scripted):
    def script(context):
        job = context.job("j0")
        job.suspend()
        yield context.timeout(1.0)
        job.resume()

    result = run(tiny_soc, {0: one_kernel()}, script)
    assert result.kernels["start_s"].iloc[0] == pytest.approx(1.0)
    assert result.metrics["makespan_s"] == pytest.approx(1.0 + SECONDS)


def test_set_share_retimes_the_running_kernel(tiny_soc, scripted):
    def script(context):
        yield context.timeout(SECONDS / 2)
        context.job("j0").set_share(0.5)  # half the work left, at half speed

    result = run(tiny_soc, {0: one_kernel()}, script)
    assert result.metrics["latency_s"] == pytest.approx(SECONDS / 2 + SECONDS)


def test_set_share_applies_to_later_kernels_whatever_the_plan(tiny_soc, scripted):
    def script(context):
        context.job("j0").set_share(0.25)
        yield context.timeout(0)

    result = run(tiny_soc, {0: one_kernel()}, script, iterations=2)
    assert list(result.kernels["share"]) == [0.25, 0.25]
    assert result.metrics["latency_s"] == pytest.approx(4 * SECONDS)


def test_shares_let_two_jobs_run_side_by_side(tiny_soc, scripted):
    def script(context):
        for name in ("j0", "j1"):
            context.job(name).set_share(0.5)
        yield context.timeout(0)

    result = run(tiny_soc, {0: one_kernel(), 1: one_kernel()}, script)
    assert list(result.kernels["start_s"]) == [0.0, 0.0]
    assert result.metrics["makespan_s"] == pytest.approx(2 * SECONDS)


def test_abort_drops_the_frame_and_frees_the_cores(tiny_soc, scripted):
    def script(context):
        yield context.timeout(SECONDS / 2)
        killed = context.job("j0")
        killed.suspend()
        killed.abort()
        yield context.timeout(SECONDS)
        killed.stop()

    # j1 waits behind j0's kernel (both want both cores) until j0 is killed
    result = run(tiny_soc, {0: one_kernel(), 1: one_kernel()}, script)
    assert list(result.kernels["job"]) == ["j1"]  # the withdrawn kernel is not recorded
    assert result.kernels["start_s"].iloc[0] == pytest.approx(SECONDS / 2)
    assert result.metrics["j0.latency_s"] != result.metrics["j0.latency_s"]  # NaN: no frame
    assert result.metrics["completed"] == 1.0  # a stopped job is done


def test_stop_ends_a_long_job_after_its_current_iteration(tiny_soc, scripted):
    def script(context):
        yield context.timeout(2.5 * SECONDS)
        context.job("j0").stop()

    result = run(tiny_soc, {0: one_kernel()}, script, iterations=1000)
    assert len(result.kernels) == 3
    assert result.metrics["makespan_s"] == pytest.approx(3 * SECONDS)
    assert result.metrics["completed"] == 1.0


def test_replan_switches_the_model_for_the_next_iterations(tiny_soc, scripted):
    small = make_trace([kernel(0, flops=LONG / 4, nbytes=0)])

    def script(context):
        yield context.timeout(SECONDS / 2)
        context.job("j0").replan(Plan([Placement("cpu.big", 2)], trace=small))

    result = run(tiny_soc, {0: one_kernel()}, script, iterations=3)
    # the iteration in flight keeps its plan; the next two run the small model
    assert result.kernels["duration_s"].tolist() == pytest.approx(
        [SECONDS, SECONDS / 4, SECONDS / 4])


def test_switching_between_two_plans_compiles_each_once(tiny_soc, scripted, monkeypatch):
    from simulator.engine import job_runner

    compiled = []
    original = job_runner._PlanState.__init__

    def counting(state, system, job, plan, resolve):
        compiled.append(plan)
        original(state, system, job, plan, resolve)

    monkeypatch.setattr(job_runner._PlanState, "__init__", counting)
    small = make_trace([kernel(0, flops=LONG / 4, nbytes=0)])
    plans = {"small": Plan([Placement("cpu.big", 2)], trace=small),
             "big": Plan([Placement("cpu.big", 2)])}
    states = []

    def script(context):
        runner = context.job("j0")._runner
        for name in ["small", "big", "small", "big"]:
            context.job("j0").replan(plans[name])
            states.append(runner.state)
            yield context.timeout(SECONDS / 4)
        # a plan whose placements were replaced is compiled again
        plans["big"].placements = [Placement("cpu.big", 1)]
        context.job("j0").replan(plans["big"])

    runners = []

    def watched(context):
        runners.append(context.job("j0")._runner)
        yield from script(context)

    result = run(tiny_soc, {0: one_kernel()}, watched, iterations=20)
    # the initial plan, then each of the two once, then the changed one
    assert len(compiled) == 4 and compiled[1:] == [plans["small"], plans["big"], plans["big"]]
    # every switch gives a new state: what holds frames or replays keys on it
    assert len({id(state) for state in states}) == 4
    assert states[0].costs is states[2].costs and states[2].fast_forward is None
    # each ran: the small model, the big one on two cores, then on one
    durations = {round(d / SECONDS, 6) for d in result.kernels["duration_s"]}
    assert durations == {0.25, 1.0, 2.0}
    # a compiled plan is kept only while someone keeps the plan: here the last state
    import gc

    del plans, states, compiled
    gc.collect()
    assert len(runners[0]._compiled) == 1


def test_pacer_releases_iterations_at_the_camera_rate(tiny_soc, scripted):
    frames = []

    def script(context):
        job = context.job("j0")
        job.pace(1.0)
        job.on_iteration(lambda handle: frames.append(len(handle.iteration_times)))
        yield context.timeout(0)

    result = run(tiny_soc, {0: one_kernel()}, script, iterations=3)
    assert result.kernels["start_s"].tolist() == pytest.approx([0.0, 1.0, 2.0])
    assert frames == [1, 2, 3]


def test_a_runtime_share_outside_0_1_is_rejected(tiny_soc, scripted):
    def script(context):
        context.job("j0").set_share(1.5)
        yield context.timeout(0)

    with pytest.raises(ValueError, match="share"):
        run(tiny_soc, {0: one_kernel()}, script)


def test_an_iteration_listener_of_a_single_job_can_read_the_history(tiny_soc, scripted):
    """One job, metrics that read no records: the run keeps only totals, but a
    listener attached before the run sees every pair (issue 21's IterationLog)."""
    previous = []

    def script(context):
        job = context.job("j0")
        job.on_iteration(lambda handle: previous.append(
            handle.iteration_times[-2] if len(handle.iteration_times) > 1 else None))
        yield context.timeout(0)

    result = run(tiny_soc, {0: one_kernel()}, script, iterations=3)
    starts = result.kernels["start_s"].tolist()
    assert previous[0] is None and len(previous) == 3
    assert [start for start, _end in previous[1:]] == pytest.approx(starts[:2])
