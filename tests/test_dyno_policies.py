"""DynO's scheduler and the split-inference policies on a Jetson + desktop server."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policies.dyno.report import steady_state
from policies.dyno.scheduler import choose, parse_objectives
from simulator.engine.simulation import simulate
from simulator.errors import ConfigError
from simulator.policy import make_policy
from simulator.spec.experiment import ExperimentSpec

THROUGHPUT = [{"metric": "throughput", "goal": "max"}, {"metric": "server_cost", "goal": "min"}]


def _objectives(constraints, targets):
    return parse_objectives(constraints, targets)


def test_constraints_filter_in_order_and_targets_rank_with_ties():
    estimates = {"latency": np.array([0.30, 0.08, 0.05, 0.09]),
                 "accuracy_drop": np.array([0.0, 0.5, 2.0, 0.5]),
                 "server_cost": np.array([0.0, 0.010, 0.020, 0.0101]),
                 "throughput": np.array([3.0, 12.0, 20.0, 11.0])}
    constraints, targets = _objectives(
        [{"metric": "latency", "max": "100 ms"}, {"metric": "accuracy_drop", "max": 1}],
        [{"metric": "server_cost", "goal": "min"}, {"metric": "throughput", "goal": "max"}])
    # 0 is too slow, 2 loses too much accuracy; 1 and 3 tie on server cost (1 %)
    assert choose(estimates, constraints, targets) == (1, True)
    # nothing meets 40 ms: best effort keeps the closest (2), which then also breaks
    # the accuracy constraint: constraints are dropped in priority order
    strict, _ = _objectives([{"metric": "latency", "max": "40 ms"},
                             {"metric": "accuracy_drop", "max": 1}], [])
    assert choose(estimates, strict, targets) == (2, False)
    swapped, _ = _objectives([{"metric": "accuracy_drop", "max": 1},
                              {"metric": "latency", "max": "40 ms"}], [])
    assert choose(estimates, swapped, targets) == (1, False)
    relative, _ = _objectives([{"metric": "latency", "max": "50 %",
                                "relative_to": "device-only"}], [])
    choice, ok = choose(estimates, relative, targets, {"device-only": 0, "server-only": 2})
    assert ok and choice == 1
    _, closest = _objectives([], [{"metric": "latency", "goal": "value", "value": "85 ms"}])
    assert choose(estimates, [], closest)[0] == 1


def test_bad_objectives_name_their_yaml_path():
    with pytest.raises(ConfigError) as info:
        make_policy({"name": "dyno", "constraints": [{"metric": "latency", "max": "fast"}]})
    assert info.value.path == "policy.constraints[0]" and "time" in str(info.value)
    with pytest.raises(ConfigError) as info:
        make_policy({"name": "dyno", "targets": [{"metric": "energy", "goal": "min"}]})
    assert info.value.path.startswith("policy.targets[0].metric")
    with pytest.raises(ConfigError, match="bitwidths"):
        make_policy({"name": "dyno", "bits": [4, 24]})


def _run(policy: dict, link: dict, iterations: int = 6, in_flight: int = 4, **extra):
    spec = {"name": "dyno-test", "soc": "jetson-agx-xavier",
            "devices": {"server": {"soc": "desktop-i7-1080ti"}},
            "links": [{"between": ["device", "server"], **link}],
            "workload": {"model": "resnet18", "input_size": 112, "iterations": iterations,
                         "max_in_flight": in_flight},
            "policy": policy, "dvfs": {"governor": "performance"},
            "outputs": {"timeline": False}, **extra}
    return simulate(ExperimentSpec.model_validate(spec))


def test_dyno_offloads_on_a_fast_link_and_stays_on_the_device_on_a_slow_one():
    fast = _run({"name": "dyno", "targets": THROUGHPUT}, {"preset": "gbe"})
    slow = _run({"name": "dyno", "targets": THROUGHPUT},
                {"bandwidth": "0.1 Mbit/s", "latency": "20 ms"})
    device = _run({"name": "device-only"}, {"preset": "gbe"})
    assert fast.metrics["split_fraction"] < 1.0 and fast.metrics["uplink_bytes"] > 0
    assert slow.metrics["split_fraction"] == 1.0
    assert (fast.metrics["steady_throughput_per_s"]
            > device.metrics["steady_throughput_per_s"])
    assert fast.metrics["accuracy_drop_pp"] < 1.0


def test_baselines_make_their_fixed_choices():
    server = _run({"name": "server-only"}, {"preset": "4g"}, iterations=3, in_flight=1)
    assert server.metrics["split"] == 0 and server.metrics["bits"] == 6  # < 1 pp
    stages = [server.metrics[f"stage_{s}_s"] for s in ("packing", "transfer", "server")]
    assert all(s > 0 for s in stages) and server.metrics["stage_client_s"] == 0
    jpeg = _run({"name": "server-only", "input": "jpeg"}, {"preset": "4g"}, iterations=3,
                in_flight=1)
    assert jpeg.metrics["uplink_bytes"] < server.metrics["uplink_bytes"]
    for bandwidth in ("1 Mbit/s", "1000 Mbit/s"):
        ns = _run({"name": "neurosurgeon"}, {"bandwidth": bandwidth, "latency": "1 ms"},
                  iterations=3, in_flight=1)
        assert ns.metrics["split_fraction"] in (0.0, 1.0) and ns.metrics["bits"] in (0, 32)


def test_dyno_redecides_when_the_bandwidth_drops():
    link = {"schedule": [["0 s", "500 Mbit/s"], ["0.3 s", "0.2 Mbit/s"]], "latency": "2 ms"}
    result = _run({"name": "dyno", "targets": [{"metric": "latency", "goal": "min"}]},
                  link, iterations=60, in_flight=1,
                  devices={"device": {"slowdown": 10}, "server": {"soc": "desktop-i7-1080ti"}})
    assert result.metrics["config_changes"] >= 1
    series = result.timeseries
    splits = series[series["name"] == "policy.split"]["value"]
    assert splits.iloc[0] < splits.iloc[-1]  # moved work back to the device
    bandwidth = series[series["name"] == "link.device-server.bandwidth_mbps"]["value"]
    assert bandwidth.max() == pytest.approx(500) and bandwidth.min() == pytest.approx(0.2)


def test_client_energy_splits_into_compute_packing_transmission_and_the_rest():
    result = _run({"name": "static-split", "position": 0.5}, {"preset": "4g"}, iterations=4,
                  in_flight=1)
    m = result.metrics
    parts = sum(m[f"energy_{p}_per_inference_j"] for p in
                ("compute", "packing", "transmission", "other"))
    assert parts == pytest.approx(m["energy_client_per_inference_j"])
    assert min(m[f"energy_{p}_per_inference_j"] for p in
               ("compute", "packing", "transmission")) > 0
    assert m["energy_transmission_per_inference_j"] == pytest.approx(
        m["device.energy_radio_j"] / 4)


def _busy_per_inference(result, n: int) -> float:
    """The most any one resource (a processor, a link) is busy per inference (s): the
    union of its kernels' (transfers') intervals over the run, over ``n``."""
    def union(intervals) -> float:
        total, end = 0.0, -np.inf
        for a, b in sorted(intervals):
            if b > end:
                total += b - max(a, end)
                end = b
        return total
    busy = [union(zip(g["start_s"], g["end_s"])) for _, g in
            result.kernels.groupby("processor")]
    busy += [union(zip(g["start_s"], g["end_s"])) for _, g in
             result.transfers.groupby("channel")]
    return max(busy) / n


@given(position=st.sampled_from([0.0, 0.3, 0.6, 1.0]), in_flight=st.integers(1, 8),
       bandwidth=st.sampled_from(["2 Mbit/s", "20 Mbit/s", "200 Mbit/s"]))
@settings(max_examples=6, deadline=None, derandomize=True)
def test_steady_throughput_never_exceeds_the_slowest_stage(position, in_flight, bandwidth):
    """Pipelined frames cannot complete faster than the busiest resource serves them."""
    n = 16
    result = _run({"name": "static-split", "position": position},
                  {"bandwidth": bandwidth, "latency": "20 ms"}, iterations=n,
                  in_flight=in_flight)
    rate = result.metrics["steady_throughput_per_s"]
    assert 0 < rate <= 1.0 / _busy_per_inference(result, n) * 1.02


def test_the_steady_window_leaves_out_the_warm_up_and_the_drain():
    # 8 in flight: 4 s of warm-up, then one completion per second, then a fast drain
    ends = [4.0 + k for k in range(20)] + [23.2, 23.4, 23.6, 23.8, 24.0, 24.2, 24.4]
    rate, window, converged = steady_state([(0.0, e) for e in ends], in_flight=8)
    assert rate == pytest.approx(1.0) and converged and window >= 10
    rate, _, converged = steady_state([(0.0, e) for e in (1.0, 2.0, 2.5, 5.0, 5.1, 9.0)])
    assert not converged


def test_dyno_can_send_the_same_jpeg_as_the_server_only_baseline():
    """Experiment 5's set-up: both methods start from the camera's JPEG, so DynO's split 0
    costs what server-only costs (and the scheduler estimates its upload)."""
    slow_client = {"device": {"slowdown": 50}, "server": {"soc": "desktop-i7-1080ti"}}
    dyno = _run({"name": "dyno", "input": "jpeg",
                 "targets": [{"metric": "latency", "goal": "min"}]},
                {"preset": "gbe"}, iterations=3, in_flight=1, devices=slow_client)
    server = _run({"name": "server-only", "input": "jpeg"}, {"preset": "gbe"},
                  iterations=3, in_flight=1, devices=slow_client)
    assert dyno.metrics["split"] == 0
    assert dyno.metrics["uplink_bytes"] == pytest.approx(server.metrics["uplink_bytes"])


def test_every_dyno_experiment_states_its_constraints_and_targets():
    """DynO's default target (onloading) is rarely what an experiment measures: each
    shipped DynO configuration names its own."""
    from pathlib import Path

    from simulator.experiment import expand, load_experiment

    folder = Path(__file__).resolve().parents[1] / "experiments" / "dyno"
    seen = 0
    for path in sorted(folder.glob("*.yaml")):
        raw, _ = load_experiment(path)
        for run in expand(raw, file=str(path)):
            policy = run.config["policy"]
            if policy["name"] == "dyno":
                seen += 1
                assert policy.get("constraints") and policy.get("targets"), path.name
    assert seen > 0
