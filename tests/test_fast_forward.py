"""Long horizons: fast-forward, pauses and conditional kernels (engine mechanisms)."""

from __future__ import annotations

import pytest
from conftest import kernel, make_trace, run

from simulator.engine.simulation import Simulation
from simulator.policy import POLICIES, Placement, Plan, Policy
from simulator.spec.experiment import ExperimentSpec


def _chain(n: int = 6):
    return make_trace([kernel(i, str(i - 1) if i else "", flops=4e8) for i in range(n)])


def _paused_chain(soc, fast_forward: bool, kernels: bool):
    """A planned, not yet run, simulation: 3,000 iterations of the chain on two big
    cores at the top OPP, a 20 s pause every 1,000 (fast-forward's steady blocks)."""
    spec = ExperimentSpec.model_validate({
        "name": "paused-chain", "soc": "tiny",
        "policy": {"name": "single", "processor": "cpu.big", "cores": 2},
        "dvfs": {"governor": "performance"},
        "workload": {"trace": "<memory>", "iterations": 3000, "fast_forward": fast_forward,
                     "pause": {"every": 1000, "duration": "20 s"}},
        "outputs": {"timeline": False, "kernels": kernels, "sample_period": "50 ms"}})
    return Simulation(spec, traces={0: _chain()}, soc=soc).build().plan()


def _run(soc, trace, fast_forward: bool, **workload):
    return run(soc, trace, {"name": "single", "processor": "cpu.big", "cores": 2},
               workload={"trace": "<memory>", "iterations": 400,
                         "fast_forward": fast_forward, **workload},
               outputs={"timeline": False, "kernels": False, "sample_period": "50 ms"})


def test_fast_forward_agrees_with_kernel_level_simulation_while_throttling(hot_soc):
    exact = _run(hot_soc, _chain(), False).metrics
    fast = _run(hot_soc, _chain(), True).metrics
    assert exact["min_freq_cpu.big_hz"] < 2e9  # the run does throttle
    assert fast["replayed_iterations"] > 300
    for metric in ("makespan_s", "energy_j"):
        assert fast[metric] == pytest.approx(exact[metric], rel=0.03), metric
    assert fast["peak_temp_c"] == pytest.approx(exact["peak_temp_c"], abs=0.5)


def test_a_replay_entering_an_unknown_state_hands_the_rest_to_kernel_level(hot_soc):
    """On the way down the caps, replays enter states with no record: kernel level
    takes over there, from the kernel the replay had reached, part-way through it,
    instead of holding the old state's rates to the end of the iteration (which
    drifted). A chain of equal kernels on one processor progresses linearly, so
    the hand-over is exact and the run is kernel level's to rounding."""
    exact = _run(hot_soc, _chain(), False).metrics
    result = run(hot_soc, _chain(), {"name": "single", "processor": "cpu.big", "cores": 2},
                 workload={"trace": "<memory>", "iterations": 400, "fast_forward": True},
                 outputs={"timeline": False, "kernels": True, "sample_period": "50 ms"})
    fast = result.metrics
    rows = result.kernels.groupby("iteration")["row"].apply(sorted)
    # part iterations: their first rows were replayed, the rest ran at kernel level
    resumed = rows[rows.apply(lambda r: r[0] > 0)]
    assert len(resumed) >= 2
    assert all(r == list(range(r[0], 6)) for r in resumed)
    assert fast["replayed_iterations"] > 300
    for metric in ("makespan_s", "energy_j"):
        assert fast[metric] == pytest.approx(exact[metric], rel=1e-6), metric


def test_a_steady_block_entering_an_unknown_state_hands_over_at_once(tiny_soc):
    """A cap lowered from outside during a steady block (a state never seen) ends the
    block at once, the rest of the iteration at kernel level, as in a one-by-one
    replay; a chain of equal kernels on one processor then agrees with kernel level
    in time to rounding."""

    def go(fast_forward: bool):
        sim = _paused_chain(tiny_soc, fast_forward, kernels=True)
        domain = next(iter(sim.devices.values())).domains["cpu.big"]

        def throttle():
            yield sim.env.timeout(300.0123)  # mid-iteration, during a steady block
            domain.set_cap(domain.top - 1)
        sim.env.process(throttle())
        sim.run()
        return sim.collect()

    exact, fast = go(False), go(True)
    rows = fast.kernels.groupby("iteration")["row"].apply(sorted)
    assert any(r[0] > 0 for r in rows)  # a part iteration: its start was replayed
    assert fast.metrics["replayed_iterations"] > 2500
    # (holding the block's rates to the iteration's end: -5.7e-5 in time, +3.7e-5 in
    # energy; the energy left, 3e-6, is the sampler's coarse steps in the blocks)
    assert fast.metrics["makespan_s"] == pytest.approx(exact.metrics["makespan_s"], rel=1e-9)
    assert fast.metrics["energy_j"] == pytest.approx(exact.metrics["energy_j"], rel=1e-5)


def test_a_cut_replay_resumes_side_by_side_kernels_side_by_side():
    """The point of the iteration a replay's progress stands for is taken from a
    kernel-level schedule by time: two kernels that ran side by side are both
    part-way there (a prefix of the completion order would have one done and the
    other not started, and run them one after the other)."""
    from simulator.engine.schedule import Schedule

    # rows 0 and 1 side by side (1 s and 3 s), then row 2 after both (1 s); at 10 s
    schedule = Schedule(10.0, [(0, 10.0, 11.0), (1, 10.0, 13.0), (2, 13.0, 14.0)])
    done, running = schedule.at(0.125)  # 0.5 s into the 4 s iteration
    assert done == frozenset() and running == pytest.approx({0: 0.5, 1: 0.5 / 3})
    done, running = schedule.at(0.5)  # 2 s
    assert done == {0} and running == pytest.approx({1: 2 / 3})
    assert schedule.at(1.0) == (frozenset({0, 1, 2}), {})


def test_pauses_idle_the_device_and_are_not_active_time(tiny_soc):
    metrics = _run(tiny_soc, _chain(), True, iterations=40,
                   pause={"every": 10, "duration": "2 s"}).metrics
    assert metrics["pause_time_s"] == pytest.approx(6.0)  # after 10, 20 and 30, not after 40
    assert metrics["active_time_s"] + metrics["pause_time_s"] == pytest.approx(
        metrics["makespan_s"])
    idle_power = 0.2 + 4 * 0.010  # base + idle cores... at least the base power
    assert metrics["energy_pause_j"] >= 0.2 * 6.0
    assert metrics["energy_pause_j"] < 3 * idle_power * 6.0
    assert metrics["energy_active_j"] == pytest.approx(metrics["energy_j"]
                                                       - metrics["energy_pause_j"])


def test_a_pause_is_accounted_even_under_a_long_sampler_step(tiny_soc):
    """Steady blocks let the sampler take one step per sample period; a pause inside
    such a step still gets exactly its own energy (settled at its start and end)."""
    def go(fast_forward: bool, period: str):
        return run(tiny_soc, _chain(), {"name": "single", "processor": "cpu.big", "cores": 2},
                   workload={"trace": "<memory>", "iterations": 1000,
                             "fast_forward": fast_forward,
                             "pause": {"every": 500, "duration": "1 s"}},
                   outputs={"timeline": False, "kernels": False,
                            "sample_period": period}).metrics
    long, short, exact = go(True, "100 s"), go(True, "50 ms"), go(False, "100 s")
    assert long["energy_pause_j"] > 0.2  # at least the base power for 1 s
    assert long["energy_pause_j"] == pytest.approx(short["energy_pause_j"], rel=1e-9)
    # kernel level accounts at thermal steps: the step under the pause's start may hold
    # up to one step of active power
    step_j = tiny_soc.thermal.step * exact["energy_active_j"] / exact["active_time_s"]
    assert abs(long["energy_pause_j"] - exact["energy_pause_j"]) <= step_j
    assert long["energy_j"] == pytest.approx(exact["energy_j"], rel=0.01)


@pytest.mark.parametrize("stop_at", [80.0, 300.0])
def test_a_stop_during_a_steady_block_ends_the_job_as_at_kernel_level(tiny_soc, stop_at):
    """A policy's stop() at run time ends a replayed block after its iteration in
    progress, as it ends a kernel-level run."""

    def go(fast_forward: bool):
        sim = _paused_chain(tiny_soc, fast_forward, kernels=False)
        runner = sim.runners[0]

        def stopper():
            yield sim.env.timeout(stop_at)
            runner.control.stop()
        sim.env.process(stopper())
        sim.run()
        return len(runner.iteration_times), sim.collect().metrics["makespan_s"]

    (exact_n, exact_s), (fast_n, fast_s) = go(False), go(True)
    assert exact_n < 3000
    assert fast_n == exact_n
    assert fast_s == pytest.approx(exact_s, rel=1e-9)


def test_epochs_become_iterations():
    exp = ExperimentSpec.model_validate({
        "name": "t", "soc": "tiny", "policy": {"name": "single"},
        "workload": {"model": "lenet5", "batch": 64, "epochs": 150, "dataset_size": 50000,
                     "pause": {"every_epochs": 10, "duration": "10 min"}}})
    workload = exp.workloads()[0]
    assert workload.total_iterations() == 150 * 782  # ~117 k batches
    assert workload.pause_every() == 7820


def test_a_job_sharing_its_device_holds_its_frames_as_a_tenant(tiny_soc):
    # the memo replay measures the whole device, so it needs the job alone there; a
    # job sharing its device holds its steady frames instead (simulator.engine.tenant)
    trace = _chain(2)

    def run(fast_forward: bool):
        spec = {"name": "t", "soc": "tiny",  # a core each: neither waits for the other
                "policy": {"name": "single", "processor": "cpu.big", "cores": 1},
                "workload": [{"trace": "a", "iterations": 60, "fast_forward": fast_forward},
                             {"trace": "b", "iterations": 40}]}
        sim = Simulation(ExperimentSpec.model_validate(spec), traces={0: trace, 1: trace},
                         soc=tiny_soc).build().plan().run()
        return sim, sim.collect().metrics

    (fast, quick), (slow, exact) = run(True), run(False)
    runner = fast.runners[0]
    assert runner.fast_forward is None and runner.tenant.held > 40
    assert quick["makespan_s"] == pytest.approx(exact["makespan_s"], rel=1e-9)
    assert quick["energy_j"] == pytest.approx(exact["energy_j"], rel=1e-9)
    assert [end for _s, end in runner.iteration_times] == pytest.approx(
        [end for _s, end in slow.runners[0].iteration_times], rel=1e-9)


@POLICIES.register("test-skip-odd")
class SkipOdd(Policy):
    """Row 1 runs only in even iterations (a conditional kernel)."""

    name = "test-skip-odd"
    conformance = {"params": {}, "workload": {"model": "lenet5", "batch": 1}}

    def plan(self, job):
        cpu = next(name for name in self.context.processors(job.device)
                   if name.startswith("cpu."))
        skip = frozenset({1})
        return Plan([Placement(cpu, 1)] * len(job.trace),
                    skip=lambda i: skip if i % 2 and len(job.trace) > 1 else frozenset())


def test_skipped_kernels_run_in_no_iteration_but_their_dependants_do(tiny_soc):
    trace = make_trace([kernel(0), kernel(1, "0"), kernel(2, "1")])
    result = run(tiny_soc, trace, {"name": "test-skip-odd"},
                 workload={"trace": "<memory>", "iterations": 4})
    ran = result.kernels.groupby("iteration")["row"].apply(sorted).to_dict()
    assert ran == {0: [0, 1, 2], 1: [0, 2], 2: [0, 1, 2], 3: [0, 2]}
    assert result.metrics["completed"] == 1.0


def test_fast_forward_keys_on_the_skipped_rows(tiny_soc):
    trace = make_trace([kernel(0), kernel(1, "0", flops=4e9), kernel(2, "1")])
    policy = {"name": "test-skip-odd"}
    workload = {"trace": "<memory>", "iterations": 40}
    exact = run(tiny_soc, trace, policy, workload=workload).metrics
    fast = run(tiny_soc, trace, policy, workload={**workload, "fast_forward": True}).metrics
    assert fast["replayed_iterations"] >= 36  # two variants, each simulated once or twice
    assert fast["makespan_s"] == pytest.approx(exact["makespan_s"], rel=1e-3)


def test_a_steady_device_replays_blocks_that_agree_with_kernel_level_simulation(
        tiny_soc, monkeypatch):
    # A device that never throttles settles at its thermal fixed point: fast-forward
    # then replays the iterations up to the next pause in blocks and samples at the
    # sample period (not at every poll), and still agrees with kernel level.
    from simulator.engine.fast_forward import FastForward

    blocks = []
    original = FastForward.replay_block

    def counted(self, skips, state, watchers=None):
        ends, cut = yield from original(self, skips, state, watchers)
        blocks.append(len(ends))
        return ends, cut

    monkeypatch.setattr(FastForward, "replay_block", counted)
    workload = {"iterations": 3000, "pause": {"every": 1000, "duration": "20 s"}}
    exact = _run(tiny_soc, _chain(), False, **workload)
    fast = _run(tiny_soc, _chain(), True, **workload)
    assert blocks and max(blocks) > 100  # blocks of many iterations were replayed
    assert sum(blocks) <= fast.metrics["replayed_iterations"]
    for metric in ("makespan_s", "energy_j", "active_time_s", "energy_pause_j"):
        assert fast.metrics[metric] == pytest.approx(exact.metrics[metric], rel=0.01), metric
    assert fast.metrics["peak_temp_c"] == pytest.approx(exact.metrics["peak_temp_c"], abs=0.5)


def test_a_limit_cycle_is_recognised_and_whole_periods_are_skipped(hot_soc, monkeypatch):
    # The hot SoC never settles: its caps step around the trip for ever (a limit
    # cycle of ~1 s, while the board warms for minutes). Fast-forward waits for
    # the cycle to converge, then leaps over whole periods, and still agrees with
    # kernel level; every iteration keeps its own start and end, and the time
    # series still integrates to the run's energy.
    from simulator.engine.fast_forward import FastForward

    leaps = []
    original = FastForward._leap

    def counted(self, start, progress):
        leapt = original(self, start, progress)
        if leapt:
            leaps.append(self.leaped)  # simulated seconds skipped so far
        return leapt

    monkeypatch.setattr(FastForward, "_leap", counted)
    exact = _run(hot_soc, _chain(), False, iterations=600)
    fast = _run(hot_soc, _chain(), True, iterations=600)
    assert leaps and leaps[-1] > 0.3 * fast.metrics["makespan_s"]
    assert fast.metrics["completed"] == 1.0
    for metric in ("makespan_s", "energy_j", "latency_s"):
        assert fast.metrics[metric] == pytest.approx(exact.metrics[metric], rel=0.01), metric
    assert fast.metrics["peak_temp_c"] == pytest.approx(exact.metrics["peak_temp_c"], abs=0.5)
    series = fast.timeseries
    power = series[series["name"] == "power.total"].sort_values("time_s")
    periods = power["time_s"].diff().fillna(power["time_s"].iloc[0])
    assert (periods > 0).all()
    assert (power["value"] * periods).sum() == pytest.approx(fast.metrics["energy_j"], rel=1e-3)


def test_look_ahead_replaces_polls_only_while_they_are_no_ops(hot_soc):
    # The prediction is exact for a held power: a long step is taken only if no
    # poll it replaces would move a cap and no node drifts far (leakage).
    import numpy as np

    from simulator.engine.lookahead import LookAhead
    from simulator.engine.simulation import Simulation

    spec = ExperimentSpec.model_validate({
        "name": "t", "soc": "tiny", "workload": {"trace": "<memory>"},
        "policy": {"name": "single", "processor": "cpu.big"}})
    device = next(iter(Simulation(spec, traces={0: _chain()}, soc=hot_soc)
                       .build().devices.values()))
    thermal, cpu = device.thermal, device.thermal.index["cpu"]
    ahead = LookAhead(thermal, device.trip_governor, poll=5)
    power = np.zeros(len(thermal.names))
    assert ahead.clear(40, power)  # at ambient, unpowered: nothing moves
    power[cpu] = 5.0  # 10 K/s into the CPU node: drifts past 0.25 K in 0.4 s
    assert not ahead.clear(40, power)
    assert ahead.clear(2, power * 0.01)  # a short step at a small power: still clear
    thermal.theta[cpu] = 34.0 - 0.02 - thermal.ambient  # just below the trip
    assert not ahead.clear(2, power * 0.01)  # the next poll would lower the cap


def test_during_and_after_a_pause_polls_wait_for_no_long_sampler_step(tiny_soc, monkeypatch):
    # A steady replay lets the sampler take steps of up to a sample period (here
    # up to 10 s); a pause that starts under such a step must still get its
    # thermal polls (an idle device cools: caps may rise) every poll period, and
    # so must what follows the pause.
    from simulator.engine.device import Device
    from simulator.engine.job_runner import JobRunner

    wakes, pauses = [], []
    wake, pause = Device._wake, JobRunner._pause

    def recorded_wake(self, steps):
        wakes.append(self.env.now)
        return wake(self, steps)

    def recorded_pause(self):
        start = self.env.now
        yield from pause(self)
        pauses.append((start, self.env.now))

    monkeypatch.setattr(Device, "_wake", recorded_wake)
    monkeypatch.setattr(JobRunner, "_pause", recorded_pause)
    run(tiny_soc, _chain(), {"name": "single", "processor": "cpu.big", "cores": 2},
        workload={"trace": "<memory>", "iterations": 3000, "fast_forward": True,
                  "pause": {"every": 1000, "duration": "3.005 s"}},
        outputs={"timeline": False, "kernels": False, "sample_period": "100 s"})
    assert len(pauses) == 2
    poll = tiny_soc.thermal.poll
    assert max(b - a for a, b in zip(wakes, wakes[1:])) > 4 * poll  # long steps happen
    for start, end in pauses:
        around = [start] + [t for t in wakes if start < t <= end + poll] + [end + poll]
        assert max(b - a for a, b in zip(around, around[1:])) <= poll * (1 + 1e-9)


def test_per_plan_data_lives_on_the_plan_so_a_new_plan_never_meets_an_old_ones():
    """Weights and schedules are the compiled plan's own (``state.fast_forward``),
    not keyed by ``id(state)``: a plan built after a replan, possibly at the freed
    plan's address, starts with none."""
    from types import SimpleNamespace

    from simulator.engine.fast_forward import FastForward

    def plan_state(seconds: list[float]):
        cost = [SimpleNamespace(duration=lambda _f, s=s: s) for s in seconds]
        proc = SimpleNamespace(domain=SimpleNamespace(max_frequency=1e9))
        return SimpleNamespace(costs=cost, procs=[proc] * len(seconds), fast_forward=None)

    ff = FastForward.__new__(FastForward)  # weights() reads no device
    old = plan_state([1.0, 1.0])
    assert ff.weights(old, frozenset()) == [0.5, 0.5]
    assert ff.weights(old, frozenset({0})) == [0.0, 1.0]
    del old  # a replan frees the old plan; the new one may reuse its id
    new = plan_state([1.0, 3.0])
    assert ff.weights(new, frozenset()) == [0.25, 0.75]
    assert ff.schedule(new, frozenset()) is None


def test_a_whole_kernel_level_iteration_leaves_its_plan_one_schedule_per_skip_set(tiny_soc):
    trace = make_trace([kernel(0), kernel(1, "0", flops=4e9), kernel(2, "1")])
    spec = ExperimentSpec.model_validate({
        "name": "s", "soc": "tiny", "policy": {"name": "test-skip-odd"},
        "workload": {"trace": "<memory>", "iterations": 40, "fast_forward": True},
        "outputs": {"timeline": False, "kernels": False, "sample_period": "1 s"}})
    sim = Simulation(spec, traces={0: trace}, soc=tiny_soc).build().plan().run()
    schedules = sim.runners[0].state.fast_forward.schedules
    assert sorted(len(s.rows) for s in schedules.values()) == [2, 3]  # row 1 skipped or not
    assert all(s.rows.dtype.itemsize == 4 for s in schedules.values())
