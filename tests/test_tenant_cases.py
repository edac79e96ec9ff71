"""Tenant fast-forward (simulator.engine.tenant) in the cases that could break it:
other tenants arriving, re-sharing or queueing, frames over two processors or with
parallel branches, schedutil, time limits, pauses, pacing, listeners, policies acting
during holds. Each held run is compared with kernel level (fast_forward false): the
metrics, every frame's end and the abort counts within 1e-6."""

from __future__ import annotations

import pytest
from conftest import kernel, make_trace

from simulator.engine.simulation import Simulation
from simulator.policy import POLICIES, Placement, Plan, Policy
from simulator.spec.experiment import ExperimentSpec

REL = 1e-6

CHAIN_A = [kernel(0, flops=4e7, nbytes=1e4), kernel(1, "0", flops=2e7),
           kernel(2, "1", flops=1e7, nbytes=2e6), kernel(3, "2", flops=1e6, nbytes=8e6)]
CHAIN_B = [kernel(0, flops=3e7), kernel(1, "0", flops=3e7, nbytes=1e6),
           kernel(2, "1", flops=5e6)]


def _policy(monkeypatch, plan, script=None, name="test-review"):
    """Register a policy planning with ``plan(job) -> Plan`` and running
    ``script(context)`` (a generator) from bind."""

    class _Scripted(Policy):
        def plan(self, job):
            return plan(job)

        def bind(self, context):
            super().bind(context)
            if script is not None:
                context.start(script(context))

    _Scripted.name = name
    monkeypatch.setitem(POLICIES._entries, name, _Scripted)
    return name


def _run(soc, fast_forward, policy, traces, iterations=300, governor="performance",
         extra=None, jobs_extra=None, ff_jobs=None, outputs=None):
    names = list(traces)
    ff_jobs = names if ff_jobs is None else ff_jobs
    workload = []
    for name in names:
        entry = {"name": name, "trace": "x", "iterations": iterations,
                 "fast_forward": fast_forward and name in ff_jobs}
        entry.update((jobs_extra or {}).get(name, {}))
        workload.append(entry)
    spec = {"name": "review", "soc": "tiny", "dvfs": {"governor": governor},
            "workload": workload,
            "outputs": outputs or {"timeline": False, "kernels": False,
                                   "sample_period": "100 ms"},
            "policy": {"name": policy}}
    spec.update(extra or {})
    spec = ExperimentSpec.model_validate(spec)
    sim = Simulation(spec, traces={i: make_trace(rows) for i, rows in
                                   enumerate(traces.values())}, soc=soc)
    sim = sim.build().plan().run()
    sim.result = sim.collect()
    return sim


def _diffs(fast, slow, rel=REL):
    """What differs beyond ``rel``: a list of strings (empty: the same run)."""
    out = []
    keys = ["makespan_s", "energy_j", "energy_dram_j", "peak_temp_c"] + [
        k for k in slow.result.metrics if k.endswith("latency_s") or k.startswith("energy_cpu")]
    for key in keys:
        a, b = fast.result.metrics.get(key), slow.result.metrics.get(key)
        if a != pytest.approx(b, rel=rel, abs=1e-12):
            out.append(f"{key}: held {a!r} vs kernel {b!r}")
    for quick, exact in zip(fast.runners, slow.runners):
        name = exact.job.name
        if len(quick.iteration_times) != len(exact.iteration_times):
            out.append(f"{name} iterations: held {len(quick.iteration_times)} vs kernel "
                       f"{len(exact.iteration_times)}")
        if quick.control.aborted != exact.control.aborted:
            out.append(f"{name} aborted: held {quick.control.aborted} vs kernel "
                       f"{exact.control.aborted}")
        ends_q = [e for _s, e in quick.iteration_times]
        ends_e = [e for _s, e in exact.iteration_times]
        for i, (x, y) in enumerate(zip(ends_q, ends_e)):
            if x != pytest.approx(y, rel=rel):
                out.append(f"{name} frame {i} end: held {x!r} vs kernel {y!r}")
                break
    return out


def _held(sim):
    return {r.job.name: (r.tenant.held, r.tenant.cuts) for r in sim.runners if r.tenant}


def _as_kernel_level(soc, policy, traces, **kw):
    """Run held (fast_forward) and at kernel level; assert they agree; return both."""
    fast = _run(soc, True, policy, traces, **kw)
    slow = _run(soc, False, policy, traces, **kw)
    diffs = _diffs(fast, slow)
    assert not diffs, "\n".join(diffs)
    return fast, slow


def _plan_of(placements):
    """plan(job): the placement (or per-row list) for each job by name."""
    def plan(job):
        p = placements[job.name]
        if isinstance(p, list):
            return Plan(placements=list(p))
        return Plan(placements=[p] * len(job.trace))
    return plan


_SHARED = {"a": Placement("cpu.big", 2, 0.5), "b": Placement("cpu.big", 2, 0.3)}


# -- a tenant that queues behind a held frame --------------------------------------
def _b_arrives_while_a_is_held(soc, monkeypatch, trace_a, a, b: Placement,
                               iterations: int, trace_b=CHAIN_B) -> None:
    """a (fast-forwarded) runs ``trace_a`` at ``a`` (a placement or one per row); b
    runs ``trace_b`` at ``b`` from 0.3 s, when a's frames are held: as at kernel level."""
    name = _policy(monkeypatch, _plan_of({"a": a, "b": b}))
    _as_kernel_level(soc, name, {"a": trace_a, "b": trace_b}, iterations=iterations,
                     ff_jobs=["a"], jobs_extra={"b": {"start": "300 ms"}})


def test_a_tenant_arriving_during_holds_queues_as_at_kernel_level(tiny_soc, monkeypatch):
    # a: a chain holding both big units (share 1); b: 1 unit, starts at 0.3 s, when a
    # is held; at kernel level b's kernel waits for a's kernel to end, then a's next
    # kernel waits for b's
    _b_arrives_while_a_is_held(tiny_soc, monkeypatch, CHAIN_A, Placement("cpu.big", 2, 1.0),
                               Placement("cpu.big", 1, 1.0), iterations=200)


def test_two_tenants_that_do_not_fit_side_by_side(tiny_soc, monkeypatch):
    # a and b each need 1.2 of the 2 big units: one always queues behind the other
    name = _policy(monkeypatch, _plan_of({"a": Placement("cpu.big", 2, 0.6),
                                          "b": Placement("cpu.big", 2, 0.6)}))
    _as_kernel_level(tiny_soc, name, {"a": CHAIN_A, "b": CHAIN_B}, iterations=200)


# -- a plan spanning two processors ---------------------------------------------
def _big_little(n):
    return [Placement("cpu.big" if i % 2 == 0 else "cpu.little", 2 if i % 2 == 0 else 1,
                      1.0) for i in range(n)]


def test_a_frame_over_big_and_little_with_another_tenant_on_big(tiny_soc, monkeypatch):
    # a: rows alternate big (2 units, share 1) and little; b: 1 unit of big, small
    # kernels (they fit in a's little phases at kernel level)
    small_b = [kernel(0, flops=2e6), kernel(1, "0", flops=2e6)]
    _b_arrives_while_a_is_held(tiny_soc, monkeypatch, CHAIN_A, _big_little(4),
                               Placement("cpu.big", 1, 1.0), iterations=200, trace_b=small_b)


def _schedutil_beside_b_on_little(soc, monkeypatch, a) -> None:
    """a runs CHAIN_A at ``a`` (a placement or one per row), b runs CHAIN_B on one
    little unit at share 0.5, under schedutil for 600 frames: as at kernel level."""
    name = _policy(monkeypatch, _plan_of({"a": a, "b": Placement("cpu.little", 1, 0.5)}))
    _as_kernel_level(soc, name, {"a": CHAIN_A, "b": CHAIN_B}, iterations=600,
                     governor="schedutil")


def test_schedutil_on_a_frame_over_big_and_little(hot_soc, monkeypatch):
    # a's rows alternate big (2 units) and little; b runs on little only. Kernel
    # level: big's busiest core is busy only in a's big phases; a stand-in holding
    # the mean (about 1 unit) all frame long would read min(busy, 1) = 1: such a
    # frame (units not constant on a processor) is no template
    _schedutil_beside_b_on_little(hot_soc, monkeypatch, _big_little(4))


def test_schedutil_on_a_chain_of_unequal_units(hot_soc, monkeypatch):
    # one processor, one chain, but rows of 2 units at share 1 and 1 unit at share 0.5
    rows = [Placement("cpu.big", 2, 1.0) if i % 2 == 0 else Placement("cpu.big", 1, 0.5)
            for i in range(4)]
    _schedutil_beside_b_on_little(hot_soc, monkeypatch, rows)


# -- the run's own limits and pauses ------------------------------------------
@pytest.mark.parametrize("limit", ["1.2345 s", "1.5 s", "2.0007 s"])
def test_a_time_limit_inside_a_hold(tiny_soc, monkeypatch, limit):
    name = _policy(monkeypatch, _plan_of(_SHARED))
    _as_kernel_level(tiny_soc, name, {"a": CHAIN_A, "b": CHAIN_B},
                     iterations=1000, extra={"time_limit": limit})


def test_pauses_of_a_tenant(tiny_soc, monkeypatch):
    name = _policy(monkeypatch, _plan_of(_SHARED))
    fast, slow = _as_kernel_level(
        tiny_soc, name, {"a": CHAIN_A, "b": CHAIN_B}, iterations=300,
        jobs_extra={"a": {"pause": {"every": 40, "duration": "37 ms"}}})
    for key in ("pause_time_s", "energy_pause_j", "energy_active_j"):
        assert fast.result.metrics[key] == pytest.approx(slow.result.metrics[key], rel=REL)


def test_a_paced_tenant(tiny_soc, monkeypatch):
    def script(context):
        context.job("a").pace(0.0123)
        context.job("b").pace(0.0071)
        yield context.timeout(0)
    name = _policy(monkeypatch, _plan_of(_SHARED), script)
    _as_kernel_level(tiny_soc, name, {"a": CHAIN_A, "b": CHAIN_B}, iterations=200)


def test_listeners_on_a_tenant(tiny_soc, monkeypatch):
    seen = {}

    def script(context):
        a = context.job("a")

        def count(handle):
            seen.setdefault(id(context), []).append(context.now)
            if len(handle.iteration_times) == 150:
                handle.stop()
        a.on_iteration(count)
        yield context.timeout(0)
    name = _policy(monkeypatch, _plan_of(_SHARED), script)
    _as_kernel_level(tiny_soc, name, {"a": CHAIN_A, "b": CHAIN_B}, iterations=300)
    a, b = seen.values()
    assert a == pytest.approx(b, rel=REL)


# -- a policy acting during holds -------------------------------------------------
def _scripted(monkeypatch, actions, placements=None):
    """A policy running ``actions``: (time s, callable(context))."""
    def script(context):
        now = 0.0
        for at, act in actions:
            yield context.timeout(at - now)
            now = at
            act(context)
    return _policy(monkeypatch, _plan_of(placements or _SHARED), script)


def test_suspend_and_resume_during_holds(tiny_soc, monkeypatch):
    name = _scripted(monkeypatch, [(0.50001, lambda c: c.job("a").suspend()),
                                   (0.61, lambda c: c.job("a").resume()),
                                   (0.9, lambda c: c.job("a").stop())])
    _as_kernel_level(tiny_soc, name, {"a": CHAIN_A, "b": CHAIN_B}, iterations=300)


def test_replan_and_set_share_at_the_same_instant(tiny_soc, monkeypatch):
    def both(c):
        a = c.job("a")
        a.replan(Plan(placements=[Placement("cpu.big", 1, 1.0)] * len(a.job.trace)))
        a.set_share(0.4)

    def share_then_plan(c):
        a = c.job("a")
        a.set_share(0.45)
        a.replan(Plan(placements=[Placement("cpu.big", 2, 0.5)] * len(a.job.trace)))
    name = _scripted(monkeypatch, [(0.50001, both), (1.00003, share_then_plan)])
    _as_kernel_level(tiny_soc, name, {"a": CHAIN_A, "b": CHAIN_B}, iterations=300)


def test_replan_then_a_share_change_later_in_the_same_hold(tiny_soc, monkeypatch):
    # the replan's decision is "hold on"; a share change 1 ms later, in the same
    # held frame (a's frames last ~7 ms), must still cut it
    def plan(c):
        a = c.job("a")
        a.replan(Plan(placements=[Placement("cpu.big", 1, 1.0)] * len(a.job.trace)))
    name = _scripted(monkeypatch, [(0.50001, plan), (0.50101, lambda c:
                                                     c.job("a").set_share(0.3))])
    _as_kernel_level(tiny_soc, name, {"a": CHAIN_A, "b": CHAIN_B}, iterations=300)


def test_abort_during_a_hold_then_resume(tiny_soc, monkeypatch):
    def kill(c):
        c.job("a").suspend()
        c.job("a").abort()
    name = _scripted(monkeypatch, [(0.50001, kill), (0.6, lambda c: c.job("a").resume()),
                                   (0.80002, lambda c: c.job("a").abort()),
                                   (0.90002, lambda c: c.job("b").abort())])
    _as_kernel_level(tiny_soc, name, {"a": CHAIN_A, "b": CHAIN_B}, iterations=300)


def test_abort_and_set_share_at_the_same_instant(tiny_soc, monkeypatch):
    def both(c):
        c.job("a").set_share(0.35)
        c.job("a").abort()
    name = _scripted(monkeypatch, [(0.50001, both)])
    _as_kernel_level(tiny_soc, name, {"a": CHAIN_A, "b": CHAIN_B}, iterations=300)


def test_the_other_tenant_changes_its_share_during_holds(tiny_soc, monkeypatch):
    # b's share goes up so that a and b no longer fit side by side
    name = _scripted(monkeypatch, [(0.50001, lambda c: c.job("b").set_share(0.9))])
    _as_kernel_level(tiny_soc, name, {"a": CHAIN_A, "b": CHAIN_B}, iterations=300, ff_jobs=["a"])


# -- frames of other shapes ---------------------------------------------------------
DIAMOND = [kernel(0, flops=2e7), kernel(1, "0", flops=3e7, nbytes=1e6),
           kernel(2, "0", flops=1e7), kernel(3, "1 2", flops=5e6, nbytes=3e6)]


def test_parallel_branches_on_a_two_unit_processor(tiny_soc, monkeypatch):
    # a's branches run side by side on big's two units (1 unit each, share 0.5):
    # its need is 0.5 in rows 0 and 3, 1.0 while both branches run, 0.5 after the
    # shorter one (not constant: no template); b (1 unit, share 0.9) always fits
    name = _policy(monkeypatch, _plan_of({"a": Placement("cpu.big", 1, 0.5),
                                          "b": Placement("cpu.big", 1, 0.9)}))
    _as_kernel_level(tiny_soc, name, {"a": DIAMOND, "b": CHAIN_B}, iterations=300)


def test_parallel_branches_with_a_tenant_that_fits_only_beside_one(tiny_soc, monkeypatch):
    # a's branches each hold a whole unit (share 1); b needs one unit: at kernel
    # level b waits while both branches run (a stand-in holding a's mean units would
    # leave b room)
    _b_arrives_while_a_is_held(tiny_soc, monkeypatch, DIAMOND, Placement("cpu.big", 1, 1.0),
                               Placement("cpu.big", 1, 1.0), iterations=300)


def test_kernels_in_a_stream(tiny_soc, monkeypatch):
    rows = [Placement("cpu.big", 1, 0.5, stream="s")] * 4
    name = _policy(monkeypatch, _plan_of({"a": rows, "b": Placement("cpu.big", 1, 0.5)}))
    _as_kernel_level(tiny_soc, name, {"a": DIAMOND, "b": CHAIN_B}, iterations=300)


def test_an_opp_change_on_a_domain_the_job_does_not_use(tiny_soc, monkeypatch):
    # b on little under schedutil-like changes: the little cluster's OPP moves;
    # a on big is held through them
    def script(context):
        context.job("b").pace(0.1)
        yield context.timeout(0)
    name = _policy(monkeypatch, _plan_of({"a": Placement("cpu.big", 2, 0.5),
                                          "b": Placement("cpu.little", 1, 1.0)}), script)
    _as_kernel_level(tiny_soc, name, {"a": CHAIN_A, "b": CHAIN_B},
                     iterations=400, extra={"dvfs": {
                     "governor": "performance", "domains": {
                     "cpu.little": {"governor": "schedutil"}}}})


def test_a_first_kernel_on_the_dsp_is_not_held(tiny_soc, monkeypatch):
    dsp_a = [kernel(0, precision="int8", flops=4e7), kernel(1, "0", precision="int8")]
    name = _policy(monkeypatch, _plan_of({"a": Placement("dsp", 1, 0.5),
                                          "b": Placement("dsp", 1, 0.3)}))
    fast, _slow = _as_kernel_level(tiny_soc, name, {"a": dsp_a, "b": dsp_a}, iterations=100)
    assert _held(fast) == {"a": (0, 0), "b": (0, 0)}


def test_one_of_two_tenants_fast_forwarded(tiny_soc, monkeypatch):
    name = _policy(monkeypatch, _plan_of(_SHARED))
    _as_kernel_level(tiny_soc, name, {"a": CHAIN_A, "b": CHAIN_B}, iterations=300, ff_jobs=["b"])


# -- templates and plans -----------------------------------------------------------
def test_a_template_keeps_its_plan_so_a_new_plan_never_meets_it(tiny_soc, monkeypatch):
    # keyed by id() a template could be met by a later plan allocated where a freed
    # plan was (a new plan on little held with big's template): the key is the plan
    # itself, which the template keeps alive
    def script(c):
        a = c.job("a")
        n = len(a.job.trace)
        yield c.timeout(0.3)
        a.replan(Plan(placements=[Placement("cpu.big", 2, 0.5)] * n))
        yield c.timeout(0.3)
        a.replan(Plan(placements=[Placement("cpu.little", 1, 1.0)] * n))
    name = _policy(monkeypatch, _plan_of(_SHARED), script)
    fast, slow = _as_kernel_level(tiny_soc, name, {"a": CHAIN_A, "b": CHAIN_B}, iterations=200)
    tenant = fast.runners[0].tenant
    assert tenant.held > 0 and tenant._templates
    assert all(type(key[0]).__name__ == "_PlanState" for key in tenant._templates)


# -- records and bookkeeping ------------------------------------------------------
def test_kernel_records_and_timeline_kept(tiny_soc, monkeypatch):
    name = _policy(monkeypatch, _plan_of(_SHARED))
    _as_kernel_level(tiny_soc, name, {"a": CHAIN_A, "b": CHAIN_B},
                     iterations=100,
                     outputs={"timeline": True, "kernels": True,
                     "sample_period": "100 ms"})


def test_held_frames_do_not_pile_up_in_the_open_iterations(tiny_soc, monkeypatch):
    name = _policy(monkeypatch, _plan_of(_SHARED))
    fast = _run(tiny_soc, True, name, {"a": CHAIN_A, "b": CHAIN_B}, iterations=400)
    sizes = [len(r.control.open) for r in fast.runners]
    assert max(sizes) < 10


def test_schedutil_on_a_chain_of_one_share_and_unequal_units(tiny_soc, monkeypatch):
    # a chain with one share but rows of 2 and 1 units at share 0.8 (needs 1.6 and
    # 0.8). Kernel level: the busiest core is busy min(1.6, 1) = 1 then 0.8; a
    # stand-in holding the mean need (~1.2) would read 1 all frame: no template
    rows = [Placement("cpu.big", 2 if i % 2 == 0 else 1, 0.8) for i in range(4)]
    _schedutil_beside_b_on_little(tiny_soc, monkeypatch, rows)


def test_schedutil_on_a_one_share_chain_over_big_and_little(tiny_soc, monkeypatch):
    _schedutil_beside_b_on_little(tiny_soc, monkeypatch, _big_little(4))


def test_schedutil_on_a_big_little_chain_beside_a_tenant(tiny_soc, monkeypatch):
    # a: big (2 units, share 1) 45 % of the frame at 1 GHz, then little. Kernel
    # level: big's busiest core is busy 45 % of the time -> 1.25 x 0.45 x 1 GHz, it
    # stays at 1 GHz. A stand-in holding the mean, 0.9 units, all frame long would
    # read a utilisation of 0.9 -> 1.125 GHz -> 2 GHz: the frame is no template
    a = [kernel(0, flops=6e7), kernel(1, "0", flops=2e7), kernel(2, "1", flops=1e7),
         kernel(3, "2", flops=1e6)]
    name = _policy(monkeypatch, _plan_of({"a": _big_little(4),
                                          "b": Placement("cpu.little", 1, 0.5)}))
    _as_kernel_level(tiny_soc, name, {"a": a, "b": CHAIN_B},
                     iterations=600, extra={"dvfs": {
                     "governor": "performance", "domains": {
                     "cpu.big": {"governor": "schedutil"}}}})


def test_a_throttled_diamond_is_cut_part_way_through_its_branches(hot_soc, monkeypatch):
    name = _policy(monkeypatch, _plan_of({"a": Placement("cpu.big", 1, 0.5),
                                          "b": Placement("cpu.big", 1, 0.5)}))
    fast, slow = _as_kernel_level(hot_soc, name, {"a": DIAMOND, "b": CHAIN_B}, iterations=2500)
    assert slow.result.metrics["min_freq_cpu.big_hz"] < 2e9


def test_an_abort_at_the_very_end_of_a_held_frame(tiny_soc, monkeypatch):
    # the abort comes at the instant a's frame 120 ends (its time in a run without it)
    name = _policy(monkeypatch, _plan_of(_SHARED))
    probe_slow = _run(tiny_soc, False, name, {"a": CHAIN_A, "b": CHAIN_B}, iterations=300)
    end_slow = probe_slow.runners[0].iteration_times[120][1]
    name = _scripted(monkeypatch, [(end_slow, lambda c: c.job("a").abort())], _SHARED)
    _as_kernel_level(tiny_soc, name, {"a": CHAIN_A, "b": CHAIN_B}, iterations=300)


def test_other_tenants_kernel_records_keep_their_kernel_level_lanes(tiny_soc, monkeypatch):
    # a (held) and b each take one whole core of cpu.big (share 1): at kernel level
    # a's kernels sit on lane 0 and b's on lane 1, so a stand-in takes a's lane too
    name = _policy(monkeypatch, _plan_of({"a": Placement("cpu.big", 1, 1.0),
                                          "b": Placement("cpu.big", 1, 1.0)}))
    outputs = {"timeline": False, "kernels": True, "sample_period": "100 ms"}
    fast, slow = _as_kernel_level(tiny_soc, name, {"a": CHAIN_A, "b": CHAIN_B},
                                  iterations=60, ff_jobs=["a"], outputs=outputs)
    assert fast.runners[0].tenant.held > 0

    def lanes(sim):
        return [tuple(x) for x in sim.result.kernels.query("job == 'b'")["lanes"]]
    assert lanes(fast) == lanes(slow)


def test_a_parked_task_queued_again_beside_a_stand_in_cuts_the_hold(tiny_soc, monkeypatch):
    # b (kernel level, from 50 ms) runs rows 1 and 2 in one thread: row 2 is parked
    # while row 1 runs and goes back to the queue when row 1 ends (Processor._release,
    # not submit). It does not fit (row 3 holds 0.75, a 0.5), and at kernel level a's
    # next kernel queues behind it until row 3 ends: the held frame is cut then (it
    # was not: makespan -2.5 %)
    rows_b = [Placement("cpu.big", 1, 0.5), Placement("cpu.big", 1, 0.5, stream="s"),
              Placement("cpu.big", 1, 1.0, stream="s"), Placement("cpu.big", 1, 0.75),
              Placement("cpu.big", 1, 0.5)]

    def plan(job):
        if job.name == "a":
            return Plan(placements=[Placement("cpu.big", 1, 0.5)] * len(job.trace))
        return Plan(placements=rows_b)

    name = _policy(monkeypatch, plan)
    trace_b = [kernel(0, flops=1e7), kernel(1, "0", flops=2e6), kernel(2, "0", flops=1e7),
               kernel(3, "0", flops=4e7), kernel(4, "1 2 3", flops=1e6)]
    fast, _slow = _as_kernel_level(tiny_soc, name, {"a": CHAIN_A, "b": trace_b},
                                   iterations=150, ff_jobs=["a"],
                                   jobs_extra={"b": {"start": "0.05 s"}})
    assert fast.runners[0].tenant.held > 0
