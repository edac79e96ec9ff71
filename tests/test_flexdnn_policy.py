"""The ``flexdnn`` policy: per-frame early exits on the engine, and run-time adaptation."""

from __future__ import annotations

import pytest

from simulator.engine.simulation import simulate
from simulator.errors import ConfigError
from simulator.spec.experiment import ExperimentSpec


def run(policy: dict, frames: int = 100, seed: int = 0, **workload):
    exp = ExperimentSpec.model_validate({
        "name": "t", "soc": "snapdragon835",
        "workload": {"name": "video", "model": "early_exit", "input_size": 32,
                     "num_classes": 10, "iterations": frames, **workload},
        # a weakly correlated video: 100 frames are a fair sample of its difficulty
        "policy": {"name": "flexdnn", "profile_frames": 500, "correlation": 0.5, **policy},
        "dvfs": {"governor": "performance"},
        "outputs": {"timeline": False, "timeseries": False}})
    return simulate(exp, seed=seed)


@pytest.fixture(scope="module")
def plans():
    return {exits: run({"exits": exits}) for exits in ("none", "all", "greedy")}


def test_early_exits_save_compute_without_losing_accuracy(plans):
    none, greedy = plans["none"].metrics, plans["greedy"].metrics
    assert none["early_exit_pct"] == 0 and greedy["early_exit_pct"] > 0
    assert greedy["compute_per_frame_s"] < none["compute_per_frame_s"]
    assert greedy["flops_per_frame"] < none["flops_per_frame"]
    assert greedy["accuracy_pct"] == none["accuracy_pct"]  # no-loss thresholds
    assert greedy["frame_latency_mean_s"] < none["frame_latency_mean_s"]
    assert greedy["energy_per_frame_j"] < none["energy_per_frame_j"]


def test_the_insertion_plan_beats_every_exit(plans):
    assert plans["greedy"].metrics["exits_inserted"] <= plans["all"].metrics["exits_inserted"]
    assert plans["greedy"].metrics["compute_per_frame_s"] <= \
        plans["all"].metrics["compute_per_frame_s"] + 1e-12


def test_frames_run_only_up_to_their_exit(plans):
    kernels = plans["greedy"].kernels
    per_frame = kernels.groupby("iteration").size()
    assert per_frame.nunique() > 1  # frames leaving at different exits run different kernels
    backbone = len(plans["none"].kernels) / 100  # kernels of a frame without exits
    assert per_frame.min() < backbone <= per_frame.max()


def test_latency_percentiles_are_ordered(plans):
    m = plans["greedy"].metrics
    assert m["frame_latency_p10_s"] <= m["frame_latency_p50_s"] <= m["frame_latency_p90_s"] \
        <= m["frame_latency_p99_s"]


def test_adaptation_reacts_to_less_compute():
    shares = [["0 s", 1.0], ["0.5 s", 0.4]]
    policy = {"camera_fps": 30, "shares": shares, "video_seed": 4, "max_accuracy_loss": 40}
    fixed = run({**policy, "adapt": False}, frames=80).metrics
    adapted = run({**policy, "adapt": True}, frames=80).metrics
    assert fixed["adaptations"] == 0 and adapted["adaptations"] > 0
    assert adapted["forced_exit_pct"] > 0 and fixed["forced_exit_pct"] == 0
    assert adapted["compute_per_frame_s"] < fixed["compute_per_frame_s"]
    assert adapted["deadline_miss_pct"] < fixed["deadline_miss_pct"]
    assert adapted["accuracy_pct"] < fixed["accuracy_pct"]  # the price of meeting deadlines


def test_deterministic_under_a_seed(plans):
    assert run({"exits": "greedy"}).metrics == plans["greedy"].metrics


@pytest.mark.parametrize("policy, message", [
    ({"exits": "some"}, "exits"),
    ({"exits": [99]}, "exit 99"),
    ({"adapt": True}, "camera_fps"),
    ({"shares": [["later", 0.5]]}, "shares"),
])
def test_bad_parameters_are_config_errors(policy, message):
    with pytest.raises(ConfigError, match=message):
        run(policy, frames=2)


@pytest.fixture(scope="module")
def mobilenet():
    work = {"input_size": 64, "options": {"base": "mobilenet_v1",
                                          "heads": ["conv32", "pool", "conv64"]}}
    return {exits: run({"exits": exits, "head_efficacy": 0.5}, **work)
            for exits in ("none", "branchynet", "greedy")}


def test_flexdnn_on_mobilenet_against_one_size_and_branchynet(mobilenet):
    none, branchy, flex = (mobilenet[k].metrics for k in ("none", "branchynet", "greedy"))
    assert branchy["exits_inserted"] == 4  # one per resolution stage but the last
    assert flex["accuracy_pct"] == branchy["accuracy_pct"] == none["accuracy_pct"]
    assert flex["compute_per_frame_s"] < none["compute_per_frame_s"]
    assert flex["compute_per_frame_s"] <= branchy["compute_per_frame_s"] + 1e-12
    assert flex["energy_per_frame_j"] < none["energy_per_frame_j"]


def test_head_efficacy_zero_makes_the_cheapest_design_win():
    work = {"input_size": 64, "options": {"base": "mobilenet_v1",
                                          "heads": ["conv32", "pool"]}}
    result = run({"exits": "all", "head_efficacy": 0.0}, frames=5, **work)
    # exits 2p + 1 are the pool heads: "all" keeps one design per position, the pool
    assert result.metrics["exits_inserted"] == 13
    strong = run({"exits": "all", "head_efficacy": 0.0}, frames=5, input_size=64,
                 options={"base": "mobilenet_v1"})
    assert result.metrics["compute_per_frame_s"] < strong.metrics["compute_per_frame_s"]
