"""The engine as a user sees it: timing, DVFS, sharing, transfers, power, thermal."""

from __future__ import annotations

import math
import random
import re

import numpy as np
import pytest
from conftest import kernel, make_trace, run

from simulator.engine.dvfs import GOVERNORS, FrequencyDomain, Governor, Schedutil
from simulator.engine.thermal import ThermalNetwork
from simulator.errors import ConfigError


def test_a_kernel_takes_flops_over_peak_times_efficiency(tiny_soc):
    trace = make_trace([kernel(0, flops=8e8)])
    result = run(tiny_soc, trace, {"name": "single", "processor": "cpu.big", "cores": 1})
    # 8 ops/cycle * 0.5 efficiency * 2 GHz = 8 GFLOP/s -> 0.1 s
    assert result.kernels["duration_s"].iloc[0] == pytest.approx(0.1, rel=1e-6)


def test_more_cores_scale_with_parallel_efficiency(tiny_soc):
    trace = make_trace([kernel(0, flops=8e8)])
    one = run(tiny_soc, trace, {"name": "single", "processor": "cpu.big", "cores": 1})
    two = run(tiny_soc, trace, {"name": "single", "processor": "cpu.big", "cores": 2})
    assert two.metrics["latency_s"] == pytest.approx(one.metrics["latency_s"] / 2, rel=1e-6)


def test_memory_bound_kernel_is_limited_by_dram(tiny_soc):
    # 1 GB moved through a 10 GB/s DRAM with almost no compute: ~0.1 s
    trace = make_trace([kernel(0, op="relu", flops=1.0, nbytes=5e8)])
    result = run(tiny_soc, trace, {"name": "single", "processor": "cpu.big"})
    assert result.metrics["latency_s"] == pytest.approx(0.1, rel=0.01)


def test_dependencies_order_kernels(diamond, tiny_soc):
    result = run(tiny_soc, diamond, {"name": "manual", "default": "cpu.big",
                                     "cores": {"cpu.big": 1}})
    k = result.kernels.set_index("row")
    assert k.loc[1, "start_s"] >= k.loc[0, "end_s"]
    assert k.loc[2, "start_s"] >= k.loc[0, "end_s"]
    assert k.loc[3, "start_s"] >= max(k.loc[1, "end_s"], k.loc[2, "end_s"])
    # two single-core kernels run side by side on the two cores
    assert k.loc[1, "start_s"] == pytest.approx(k.loc[2, "start_s"])
    assert set(k.loc[1, "lanes"]) != set(k.loc[2, "lanes"])


def test_single_runs_one_operator_at_a_time_like_a_framework(diamond, tiny_soc):
    result = run(tiny_soc, diamond, {"name": "single", "processor": "cpu.big", "cores": 1})
    spans = result.kernels.sort_values("start_s")[["start_s", "end_s"]].to_numpy()
    assert (spans[1:, 0] >= spans[:-1, 1] - 1e-12).all()


def test_data_crossing_to_the_dsp_pays_the_switch(tiny_soc):
    trace = make_trace([kernel(0, precision="int8", nbytes=1e6),
                        kernel(1, "0", precision="int8", nbytes=1e6)])
    result = run(tiny_soc, trace, {"name": "manual", "default": "cpu.big",
                                   "kernels": {1: "dsp"}})
    transfer = result.transfers.iloc[0]
    # 1 ms switch + 1 MB at 1 GB/s
    assert transfer["end_s"] - transfer["start_s"] == pytest.approx(2e-3, rel=1e-6)
    k = result.kernels.set_index("row")
    assert k.loc[1, "start_s"] == pytest.approx(transfer["end_s"])


def test_fp32_kernel_cannot_run_on_the_dsp(tiny_soc, chain):
    with pytest.raises(ConfigError, match="no fp32 datapath"):
        run(tiny_soc, chain, {"name": "single", "processor": "dsp"})


@pytest.mark.parametrize("second, third, message", [
    ("dsp", "cpu.big:9", "k1 (conv, fp32) cannot run"),  # no fp32 datapath
    ("cpu.big:9", "dsp", "k1: 9 units requested"),  # more units than it has
])
def test_a_plan_fails_at_its_first_bad_row(tiny_soc, chain, monkeypatch, second, third,
                                           message):
    # A plan is compiled per distinct row (placement and cost-relevant values), not
    # row by row: the first bad row in row order must still be the one named.
    from simulator.policy import Placement, Plan, Policy

    def placement(where):
        processor, _, units = where.partition(":")
        return Placement(processor, int(units or 1))

    class Rows(Policy):
        def plan(self, job):
            return Plan([placement(w) for w in ("cpu.big", second, third, "cpu.big")])

    monkeypatch.setattr("simulator.engine.simulation.make_policy", lambda _: Rows())
    with pytest.raises(ConfigError, match=re.escape(message)):
        run(tiny_soc, chain, {"name": "single"})


def test_fallback_sends_unsupported_ops_to_the_cpu(tiny_soc):
    trace = make_trace([kernel(0, precision="int8"), kernel(1, "0", op="batchnorm",
                                                            precision="int8")])
    result = run(tiny_soc, trace, {"name": "single", "processor": "dsp",
                                   "fallback": "cpu.big"})
    assert list(result.kernels.sort_values("row")["processor"]) == ["dsp", "cpu.big"]


@GOVERNORS.register("test-drop-after-50ms")
class DropAfter50ms(Governor):
    """A plugin governor: top OPP, then the lowest after its first 50 ms period."""

    period = 0.05

    def decide(self, domain, utilisation):
        return 0


def test_frequency_change_mid_kernel_retimes_the_remainder(tiny_soc):
    domain = FrequencyDomain("cpu.big", tiny_soc.cpu["big"].opps)
    events = []
    domain.listeners.append(events.append)
    domain.request(0)
    assert domain.frequency == 1e9 and events == [True, False]
    # a 0.1 s kernel at 2 GHz whose frequency halves after 0.05 s needs another 0.1 s
    trace = make_trace([kernel(0, flops=8e8)])
    result = run(tiny_soc, trace, {"name": "single", "processor": "cpu.big", "cores": 1},
                 dvfs={"governor": "test-drop-after-50ms"})
    assert result.metrics["latency_s"] == pytest.approx(0.15, rel=1e-6)


def test_schedutil_follows_the_busiest_core(tiny_soc):
    # one of two cores fully busy: schedutil (like Linux) keeps the top OPP
    trace = make_trace([kernel(0, flops=8e8)])
    result = run(tiny_soc, trace, {"name": "single", "processor": "cpu.big", "cores": 1},
                 dvfs={"governor": "schedutil", "period": "10 ms"})
    assert result.metrics["latency_s"] == pytest.approx(0.1, rel=1e-6)


def test_userspace_governor_fixes_the_frequency(tiny_soc):
    trace = make_trace([kernel(0, flops=8e8)])
    result = run(tiny_soc, trace, {"name": "single", "processor": "cpu.big", "cores": 1},
                 dvfs={"governor": "userspace", "frequency": "1 GHz"})
    assert result.metrics["latency_s"] == pytest.approx(0.2, rel=1e-6)


def test_schedutil_lowers_the_frequency_of_an_idle_domain(tiny_soc):
    governor = Schedutil(period=0.01)
    domain = FrequencyDomain("x", tiny_soc.cpu["big"].opps)
    assert governor.decide(domain, 0.1) == 0
    assert governor.decide(domain, 1.0) == domain.top


def test_schedutil_skips_exactly_the_decisions_that_keep_the_request():
    # update() skips decide + request for utilisations in a cached interval: it
    # must leave every domain state exactly as decide + request would, at every
    # OPP, request, cap and floor, at the interval's float edges too
    from simulator.spec.soc import OPP

    opps = [OPP(frequency=f"{f} MHz", voltage=f"{v} V") for f, v in
            ((300, 0.6), (600, 0.65), (960, 0.7), (1200, 0.8), (1500, 0.9))]
    rng = random.Random(7)
    governor = Schedutil(period=0.01)
    for floor in (None, 6e8):
        for index in range(len(opps)):
            for requested in range(len(opps)):
                for cap in (len(opps) - 1, 2):
                    domain = FrequencyDomain("x", opps, floor)
                    domain.requested, domain.cap = requested, cap
                    domain.index = min(requested, cap)
                    if domain.index != index:
                        continue
                    low, high = governor._keeping(domain)
                    edges = [u for u in (low, high) if 0.0 <= u <= 1.0]
                    utils = ([0.0, 1.0, -0.5, 2.0] + [rng.random() for _ in range(40)]
                             + edges + [math.nextafter(u, 2.0) for u in edges]
                             + [math.nextafter(u, -1.0) for u in edges])
                    for u in utils:
                        state = (domain.requested, domain.index)
                        governor.update(domain, u)
                        after = (domain.requested, domain.index)
                        domain.requested, domain.index = state
                        domain.request(governor.decide(domain, u))
                        assert (domain.requested, domain.index) == after, (index, u)
                        domain.requested, domain.index = state
    # the common fixed points are skipped: idle at the floor, fully busy at the top
    domain = FrequencyDomain("x", opps)
    assert governor._keeping(domain)[1] == math.inf  # busy at the top
    domain.request(0)
    assert governor._keeping(domain)[0] == -math.inf  # idle at the floor


def test_schedutils_share_keep_intervals_only_when_they_decide_alike():
    from simulator.spec.soc import OPP

    class Eager(Schedutil):  # another decision at the same headroom
        def decide(self, domain, utilisation):
            return domain.top if utilisation > 0.1 else 0

    opps = [OPP(frequency=f"{f} MHz", voltage="0.8 V") for f in (300, 600, 1200)]
    for governor in (Schedutil(), Schedutil(headroom=2.0), Eager(), Schedutil()):
        domain = FrequencyDomain("x", opps)
        domain.request(1)
        # what update() uses (kept for the process) is what this governor computes
        assert governor._shared_keeping(domain) == governor._keeping(domain)


def test_no_governor_goes_below_the_os_floor_but_the_thermal_cap_does(tiny_soc):
    opps = tiny_soc.cpu["big"].opps
    domain = FrequencyDomain("x", opps, min_frequency=opps[0].frequency * 1.01)
    assert domain.floor == 1
    GOVERNORS.get("powersave")().start(domain)
    assert domain.index == 1
    domain.request(0)
    assert domain.index == 1
    domain.set_cap(0)  # cpufreq's QoS: the maximum wins over the minimum
    assert domain.index == 0


def test_powersave_runs_at_the_socs_min_frequency(tiny_soc):
    cpu = dict(tiny_soc.cpu)
    top = cpu["big"].opps[-1].frequency
    cpu["big"] = cpu["big"].model_copy(update={"min_frequency": top})
    floored = tiny_soc.model_copy(update={"cpu": cpu})
    trace = make_trace([kernel(0, flops=8e8)])
    policy = {"name": "single", "processor": "cpu.big", "cores": 1}
    slow = run(tiny_soc, trace, policy, dvfs={"governor": "powersave"})
    fast = run(floored, trace, policy, dvfs={"governor": "powersave"})
    assert slow.metrics["latency_s"] == pytest.approx(0.2, rel=1e-6)
    assert fast.metrics["latency_s"] == pytest.approx(0.1, rel=1e-6)


def test_processor_sharing_between_two_tenants(tiny_soc):
    trace = make_trace([kernel(0, flops=8e8)])
    alone = run(tiny_soc, trace, {"name": "single", "processor": "cpu.big", "cores": 1})
    spec = {"name": "t", "soc": "tiny", "dvfs": {"governor": "performance"},
            "workload": [{"trace": "a", "name": "a"}, {"trace": "b", "name": "b"}],
            "policy": {"name": "single", "processor": "cpu.big", "cores": 1}}
    from simulator.engine.simulation import simulate
    from simulator.spec.experiment import ExperimentSpec

    both = simulate(ExperimentSpec.model_validate(spec), traces={0: trace, 1: trace},
                    soc=tiny_soc)
    # two tenants on two cores: no slowdown
    assert both.metrics["a.latency_s"] == pytest.approx(alone.metrics["latency_s"])


def test_policy_given_shares_split_one_unit_between_tenants(tiny_soc):
    from simulator.engine.simulation import simulate
    from simulator.spec.experiment import ExperimentSpec

    trace = make_trace([kernel(0, flops=4e8, precision="int8")])
    spec = {"name": "t", "soc": "tiny", "dvfs": {"governor": "performance"},
            "workload": [{"trace": "a", "name": "a"}, {"trace": "b", "name": "b"}],
            "policy": {"name": "manual", "default": "dsp", "shares": {"a": 0.25, "b": 0.75}}}
    result = simulate(ExperimentSpec.model_validate(spec), traces={0: trace, 1: trace},
                      soc=tiny_soc)
    alone = run(tiny_soc, trace, {"name": "manual", "default": "dsp"})
    solo = alone.kernels["duration_s"].iloc[0]
    durations = result.kernels.set_index("job")["duration_s"]
    # each tenant's kernel runs at its share of full speed, side by side
    assert durations["a"] == pytest.approx(4 * solo, rel=1e-6)
    assert durations["b"] == pytest.approx(solo / 0.75, rel=1e-6)


def test_accelerator_jobs_upload_input_and_download_output(tiny_soc):
    trace = make_trace([kernel(0, precision="int8", nbytes=1e6)])
    result = run(tiny_soc, trace, {"name": "single", "processor": "dsp"})
    labels = list(result.transfers["label"])
    assert labels == ["input", "<memory>/0:k0 (output)"]
    # 1 ms switch + 1 MB at 1 GB/s each way, around the kernel
    kernel_time = result.kernels["duration_s"].iloc[0]
    assert result.metrics["latency_s"] == pytest.approx(kernel_time + 2 * 2e-3, rel=1e-6)


def test_energy_is_the_integral_of_power(tiny_soc, chain):
    result = run(tiny_soc, chain, {"name": "single", "processor": "cpu.big"},
                 outputs={"sample_period": "10 ms"})
    ts = result.timeseries
    power = ts[ts["name"] == "power.total"].sort_values("time_s")
    times = np.concatenate([[0.0], power["time_s"].to_numpy()])
    integral = float(np.sum(np.diff(times) * power["value"].to_numpy()))
    assert integral == pytest.approx(result.metrics["energy_j"], rel=1e-9)


def test_dynamic_energy_matches_ceff_v2_f_times_busy_time(tiny_soc):
    trace = make_trace([kernel(0, flops=8e8)])
    result = run(tiny_soc, trace, {"name": "single", "processor": "cpu.big", "cores": 1})
    # compute-bound: activity 1; 1 nF * 1 V^2 * 2 GHz * 0.1 s = 0.2 J dynamic,
    # + leakage 50 mW x 0.1 s (at 25 C) + idle 10 mW x 0.1 s for the other core.
    expected = 0.2 + 0.05 * 0.1 * 2 ** ((25 - 25) / 25) + 0.01 * 0.1
    assert result.metrics["energy_cpu.big_j"] == pytest.approx(expected, rel=0.02)


def test_time_lost_to_parallel_scaling_is_spent_at_the_stall_activity(tiny_soc_dict):
    from simulator.hardware.cost import CostModel
    from simulator.spec.soc import SocSpec

    tiny_soc_dict["cpu"]["big"]["parallel_efficiency"] = 0.5
    soc = SocSpec.model_validate(tiny_soc_dict)
    row = kernel(0, flops=8e8)
    # 2 cores at 1.5x one core: 0.0667 s; each core computes its half in 0.05 s and
    # waits (stall activity 0.5) for the rest: activity (0.05 + 0.5 * 0.0167) / 0.0667
    cost = CostModel(soc).kernel_cost("cpu.big", 2, row)
    assert cost.duration(2e9) == pytest.approx(8e8 / (8 * 0.5 * 1.5 * 2e9), rel=1e-6)
    assert cost.activity(2e9, 0.5) == pytest.approx(0.875, rel=1e-6)
    result = run(soc, make_trace([row]), {"name": "single", "processor": "cpu.big", "cores": 2})
    seconds = result.metrics["latency_s"]
    # the engine's inlined power: 1 nF * 1 V^2 * 2 GHz * 0.875 * 2 cores, + leakage 50 mW x 2
    expected = (1e-9 * 2e9 * 0.875 * 2 + 0.05 * 2) * seconds
    assert result.metrics["energy_cpu.big_j"] == pytest.approx(expected, rel=0.01)


def test_integer_kernels_switch_at_their_precision_activity(tiny_soc):
    def cpu_joules(activity: float, precision: str) -> float:
        cpu = dict(tiny_soc.cpu)
        power = cpu["big"].power.model_copy(update={"precision_activity": {"int8": activity}})
        cpu["big"] = cpu["big"].model_copy(update={"power": power})
        soc = tiny_soc.model_copy(update={"cpu": cpu})
        trace = make_trace([kernel(0, flops=8e8, precision=precision)])
        result = run(soc, trace, {"name": "single", "processor": "cpu.big", "cores": 1})
        return result.metrics["energy_cpu.big_j"]

    # a compute-bound kernel: dynamic energy is linear in the activity, the rest fixed
    full, half, quarter = (cpu_joules(a, "int8") for a in (1.0, 0.5, 0.25))
    assert full > half > quarter
    assert (full - half) == pytest.approx(2 * (half - quarter), rel=1e-6)
    assert cpu_joules(0.5, "fp32") == pytest.approx(cpu_joules(1.0, "fp32"), rel=1e-12)


def test_thermal_network_matches_its_steady_state(tiny_soc):
    network = ThermalNetwork(tiny_soc.thermal)
    power = np.array([2.0, 0.0, 0.0])
    for _ in range(200_000):  # 2000 s, many time constants
        network.advance(power)
    steady = network.steady_state(power)
    assert network.temperatures == pytest.approx(steady, abs=1e-6)
    # 2 W through 1 W/K then 0.5 W/K: cpu 25 + 2 + 4 = 31 C
    assert steady[0] == pytest.approx(31.0)


def test_a_changed_ambient_moves_every_node_reading_alike(tiny_soc):
    """temperatures (an array kept for speed) and temperature(node) follow the ambient."""
    network = ThermalNetwork(tiny_soc.thermal)
    network.advance(np.array([2.0, 0.0, 0.0]), steps=100)
    before = network.temperatures.copy()
    network.ambient += 10.0
    assert network.temperatures == pytest.approx(before + 10.0, abs=1e-12)
    assert [network.temperature(name) for name in network.names] == list(network.temperatures)


def test_a_device_reads_a_changed_ambient_at_its_next_integration(tiny_soc):
    """The device's list copy of the temperatures (leakage, samples) is not reused
    after the ambient moved."""
    import simpy

    from simulator.engine.device import Device
    from simulator.engine.dvfs import Powersave

    env = simpy.Environment()
    device = Device(env, "phone", tiny_soc, {p: Powersave() for p in tiny_soc.processors()},
                    record_task=lambda *args: None)
    device.start()
    env.run(until=0.05)
    device.thermal.ambient += 10.0
    # the copy is valid only while theta is the object it was made from; the next
    # integration's leakage would otherwise read the old ambient
    assert device._temps_of is not device.thermal.theta
    env.run(until=0.1)
    assert device._temps_list == device.thermal.temperatures.tolist()
    assert min(device._temps_list) > 34.9


def test_thermal_governor_caps_frequency_when_hot(tiny_soc_dict):
    from simulator.spec.soc import SocSpec

    tiny_soc_dict["thermal"]["trips"] = [{"sensor": "cpu", "temperature": "26 C",
                                          "domains": ["cpu.big"]}]
    soc = SocSpec.model_validate(tiny_soc_dict)
    trace = make_trace([kernel(i, str(i - 1) if i else "", flops=4e9) for i in range(10)])
    result = run(soc, trace, {"name": "single", "processor": "cpu.big"})
    assert result.metrics["min_freq_cpu.big_hz"] == 1e9
    assert result.metrics["peak_temp_c"] > 26


def test_two_simulations_in_one_process_do_not_interfere(tiny_soc, chain):
    first = run(tiny_soc, chain, {"name": "single", "processor": "cpu.big"})
    run(tiny_soc, chain, {"name": "single", "processor": "cpu.little"})
    again = run(tiny_soc, chain, {"name": "single", "processor": "cpu.big"})
    assert first.metrics == again.metrics


def test_runs_of_one_soc_share_its_cost_model_and_only_that(tiny_soc, tiny_soc_dict):
    from simulator.hardware.cost import CostModel
    from simulator.spec.soc import SocSpec

    model = CostModel.shared(tiny_soc)
    assert CostModel.shared(tiny_soc) is model
    assert CostModel.shared(tiny_soc, 2.0) is not model  # a slower device of the kind
    equal = SocSpec.model_validate(tiny_soc_dict)  # equal, but another object
    assert CostModel.shared(equal) is not model
    row = kernel(0, flops=8e8)
    # a shared model's memo gives what a fresh model computes
    assert model.kernel_cost("cpu.big", 2, row) == CostModel(tiny_soc).kernel_cost(
        "cpu.big", 2, row)


def test_same_seed_same_results(tiny_soc, diamond):
    a = run(tiny_soc, diamond, {"name": "heft"}, seed=3)
    b = run(tiny_soc, diamond, {"name": "heft"}, seed=3)
    assert a.metrics == b.metrics
    assert a.kernels.equals(b.kernels)


def test_time_limit_stops_a_long_run(tiny_soc, chain):
    result = run(tiny_soc, chain, {"name": "single", "processor": "cpu.little"},
                 workload={"trace": "x", "iterations": 1000}, time_limit="50 ms")
    assert result.metrics["makespan_s"] == pytest.approx(0.05)
    assert result.metrics["completed"] == 0.0
    assert math.isfinite(result.metrics["energy_j"])


def test_cross_cluster_thread_pool_splits_the_work(tiny_soc):
    trace = make_trace([kernel(0, flops=8e8), kernel(1, "0", flops=8e8)])
    result = run(tiny_soc, trace, {"name": "single", "processor": ["cpu.big", "cpu.little"],
                                   "cores": 3})
    assert set(result.kernels["processor"]) == {"cpu.big", "cpu.little"}
    assert len(result.kernels) == 4  # each kernel split into a big and a little part


@pytest.mark.parametrize("rows", [
    [kernel(0), kernel(1, "0"), kernel(2, "0"), kernel(3, "1 2")],  # a diamond
    [kernel(0), kernel(1, "0"), kernel(2, "0 0"), kernel(3, "1 1 0")],  # repeated deps
    [kernel(i, str(i - 3) if i >= 3 else "") for i in range(12)],  # three chains
    [kernel(0), kernel(1), kernel(2, "1"), kernel(3, "0"), kernel(4, "3 2")],  # no deps
    [kernel(5), kernel(9, "5"), kernel(2, "9"), kernel(7, "9"), kernel(1, "7 5")],  # ids
], ids=["diamond", "repeats", "chains", "roots", "ids-out-of-order"])
def test_serializing_indexes_like_a_full_rebuild(rows):
    # Trace.in_order derives the serialized trace from the rows' own adjacency (one
    # dependency per row on a fast path); the result must be what trace_from_table
    # builds from the serialized dependencies: every row's own ids and the id of
    # the row before, sorted, without repeats.
    from simulator.trace import trace_from_table

    trace = make_trace(rows)
    ids = trace.table["id"].tolist()
    deps = [tuple(sorted(set(d) | ({ids[r - 1]} if r else set())))
            for r, d in enumerate(trace.table["deps"])]
    fast = trace.in_order(source="s")
    table = trace.table.copy()
    table["deps"] = deps
    full = trace_from_table(table, source="s")
    assert fast.table.equals(full.table)
    assert fast.table["deps"].tolist() == deps
    assert (fast.preds, fast.succs, fast.index_of) == (full.preds, full.succs, full.index_of)
    assert all(r - 1 in preds for r, preds in enumerate(fast.preds) if r)  # in order


@pytest.mark.parametrize("model, mode", [("inception_v3", "inference"),
                                         ("resnet18", "training")])
def test_serializing_a_model_indexes_like_a_full_rebuild(model, mode):
    # branches, joins and long chains of a real graph, forward and backward
    from simulator.trace import trace_from_table
    from workloads.generate import generate_trace

    trace = generate_trace(model, mode=mode, batch=1)
    ids = trace.table["id"].tolist()
    table = trace.table.copy()
    table["deps"] = [tuple(sorted(set(d) | ({ids[r - 1]} if r else set())))
                     for r, d in enumerate(trace.table["deps"])]
    full = trace_from_table(table, source="s")
    fast = trace.in_order(source="s")
    assert fast.table.equals(full.table)
    assert (fast.preds, fast.succs, fast.index_of) == (full.preds, full.succs, full.index_of)


def test_device_levels_follow_cap_changes_that_keep_the_opp(tiny_soc):
    # levels() is kept between changes: a cap change that leaves the OPP where it
    # is (no OPP listener runs) must still show in the next sample's levels
    import simpy

    from simulator.engine.device import Device
    from simulator.engine.dvfs import Powersave

    device = Device(simpy.Environment(), "phone", tiny_soc,
                    {local: Powersave() for local in tiny_soc.processors()},
                    record_task=lambda *args: None)
    domain = device.domains["cpu.big"]
    assert domain.index == 0 < domain.top
    position = 2 * list(device.domains).index("cpu.big")
    before = device.levels()
    assert before[position + 1] == domain.frequencies[domain.top]
    domain.set_cap(0)  # the OPP stays 0
    after = device.levels()
    assert domain.index == 0
    assert after[position:position + 2] == [domain.frequencies[0], domain.frequencies[0]]
    after[0] = -1.0  # a copy: the kept list is not the caller's
    assert device.levels()[0] != -1.0


def test_a_calm_devices_energy_and_power_depend_on_the_period_alone(tiny_soc):
    # With no processor stirred (and no radio or storage) _collect returns the lines
    # it computed once per period length: they must be what the lines give at any
    # temperature; a stirred processor takes the lines again.
    import simpy

    from simulator.engine.device import Device
    from simulator.engine.dvfs import Powersave

    env = simpy.Environment()
    device = Device(env, "phone", tiny_soc,
                    {local: Powersave() for local in tiny_soc.processors()},
                    record_task=lambda *args: None)
    periods = (0.01, 0.25, 0.0137)
    kept = {dt: device._collect(dt) for dt in periods}
    for heat in (0.0, 15.0, 40.0):  # the network warmer than when they were kept
        device.thermal.theta = device.thermal.theta + heat
        for dt in periods:
            energy, power = device._collect(dt)
            assert energy is kept[dt][0] and power is kept[dt][1]  # the kept ones
            fresh_energy, fresh_power = device._lines(dt)
            assert list(energy.items()) == list(fresh_energy.items())
            assert power.tobytes() == fresh_power.tobytes()
    assert not kept[0.01][1].flags.writeable  # shared: nobody may change it
    big = device.processors["cpu.big"]
    big.hold(power=2.0, busy=1.0, core_busy=1.0, dram_rate=0.0)  # stirred
    env.run(until=0.01)
    energy, power = device._collect(0.01)
    assert energy is not kept[0.01][0]
    assert energy["cpu.big"] > kept[0.01][0]["cpu.big"]


def test_a_processor_stays_under_the_interpreters_shared_key_limit(tiny_soc):
    # CPython 3.11 shares one attribute key table among a class's instances only up
    # to 30 attributes; a Processor past it read its attributes on the kernel path
    # ~5 % slower (benchmarks/engine.py, 4 chains): new per-processor state must
    # not push it over (constants of a kernel's first timing stay on ``spec``)
    from simulator.engine.simulation import Simulation
    from simulator.spec.experiment import ExperimentSpec

    spec = ExperimentSpec.model_validate({
        "name": "t", "soc": "tiny", "workload": [{"trace": "a", "name": "a"},
                                                  {"trace": "b", "name": "b"}],
        "policy": {"name": "manual", "default": "cpu.big", "shares": {"a": 0.5, "b": 0.5}}})
    trace = make_trace([kernel(0), kernel(1, "0")])
    sim = Simulation(spec, traces={0: trace, 1: trace}, soc=tiny_soc).build().plan().run()
    for device in sim.devices.values():
        for proc in device.processors.values():
            assert len(vars(proc)) < 30, sorted(vars(proc))
