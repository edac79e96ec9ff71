"""Cappuccino and its baselines on the Cappuccino phones, as API demos.

Modes chosen under an accuracy limit, vector lanes with and without map-major
order, output-level parallelism across the CPU and the GPU, the Java baseline
on one core, CNNdroid's GPU layers.
"""

from __future__ import annotations

import pytest

from policies.cappuccino.modes import AccuracyTable, choose_modes, load_accuracy
from policies.cappuccino.vectors import simd_waste
from simulator.engine.simulation import simulate
from simulator.errors import ConfigError
from simulator.spec.experiment import ExperimentSpec


def run(policy: dict, model: str = "squeezenet1_0", soc: str = "snapdragon800", **workload):
    return simulate(ExperimentSpec.model_validate({
        "name": "t", "soc": soc, "workload": {"model": model, **workload}, "policy": policy,
        "dvfs": {"governor": "performance"}, "thermal": {"governor": False},
        "outputs": {"timeline": False}}))


def test_modes_are_chosen_greedily_within_the_accuracy_limit():
    times = {"conv1": {"exact": 10.0, "relaxed": 8.0, "imprecise": 2.0},
             "conv2": {"exact": 10.0, "imprecise": 5.0},
             "fc": {"exact": 4.0, "imprecise": 3.9}}
    losses = {"conv1": {"relaxed": 0.0, "imprecise": 0.02},
              "conv2": {"imprecise": 0.01},
              "fc": {}}  # no measurement: stays exact
    assert choose_modes(times, losses, 0.0) == {"conv1": "relaxed", "conv2": "exact",
                                                "fc": "exact"}
    # conv2 saves more per point of accuracy (5 s / 0.01) than conv1 (6 s / 0.02)
    assert choose_modes(times, losses, 0.02) == {"conv1": "relaxed", "conv2": "imprecise",
                                                 "fc": "exact"}
    assert choose_modes(times, losses, 0.03) == {"conv1": "imprecise", "conv2": "imprecise",
                                                 "fc": "exact"}


def test_the_bundled_table_says_the_papers_models_lose_nothing():
    table = load_accuracy()
    assert table.loss("alexnet", "conv3", "imprecise") == 0.0
    assert table.loss("resnet18", "conv1", "imprecise") is None  # not measured
    assert AccuracyTable({"m": {"layers": {"a": {"imprecise": 0.1}}}}).loss(
        "m", "a", "imprecise") == 0.1


def test_a_bad_accuracy_table_names_its_file_and_entry(tmp_path):
    path = tmp_path / "acc.yaml"
    path.write_text("models: {alexnet: {default: {approximate: 0.1}}}\n")
    with pytest.raises(ConfigError) as info:
        load_accuracy(path)
    assert "acc.yaml" in str(info.value) and "models.alexnet.default.approximate" in str(
        info.value)


@pytest.mark.parametrize(("kernel", "channels", "map_major", "waste"), [
    (3, 64, False, 0.25),   # 3 of 4 lanes along a kernel row
    (1, 64, False, 0.75),   # a 1x1 kernel row fills one lane
    (11, 3, False, 1 / 12),
    (3, 64, True, 0.0),     # map-major: lanes span 4 maps
    (7, 3, True, 0.25),     # the RGB image wastes a lane
])
def test_lanes_idle_at_kernel_rows_unless_maps_are_interleaved(kernel, channels, map_major,
                                                              waste):
    record = {"op": "conv", "kernel": kernel, "in_channels": channels, "groups": 1}
    assert simd_waste(record, map_major) == pytest.approx(waste)
    assert simd_waste({"op": "relu"}, map_major) == 0.0


def test_imprecise_mode_is_faster_than_exact_and_uses_the_gpu():
    exact = run({"name": "cappuccino", "mode": "exact"})
    imprecise = run({"name": "cappuccino", "mode": "imprecise"})
    assert set(exact.kernels["processor"]) == {"cpu.big"}  # GPU drivers need inexact floats
    assert {"cpu.big", "gpu"} <= set(imprecise.kernels["processor"])
    assert imprecise.metrics["latency_s"] < exact.metrics["latency_s"] / 4
    assert imprecise.metrics["cappuccino.accuracy_loss"] == 0.0
    assert imprecise.metrics["cappuccino.inexact_layers"] > 0


def test_map_major_order_pays_off_on_1x1_layers():
    planar = run({"name": "cappuccino", "map_major": False, "processors": ["cpu.big"]})
    interleaved = run({"name": "cappuccino", "map_major": True, "processors": ["cpu.big"]})
    assert interleaved.metrics["latency_s"] < 0.7 * planar.metrics["latency_s"]


def test_unmeasured_models_stay_exact():
    result = run({"name": "cappuccino", "mode": "imprecise"}, model="lenet5")
    assert result.metrics["cappuccino.inexact_layers"] == 0.0


def test_the_java_baseline_runs_one_kernel_at_a_time_on_one_core():
    result = run({"name": "single-thread"}, model="lenet5")
    kernels = result.kernels.sort_values("start_s")
    assert set(kernels["units"]) == {1} and set(kernels["processor"]) == {"cpu.big"}
    assert (kernels["start_s"].to_numpy()[1:] >= kernels["end_s"].to_numpy()[:-1]).all()


def test_cnndroid_puts_convolutions_and_fc_layers_on_the_gpu():
    result = run({"name": "cnndroid"}, model="alexnet", soc="snapdragon810")
    on_gpu = result.kernels[result.kernels["processor"] == "gpu"]["label"]
    assert on_gpu.str.contains("conv").any() and on_gpu.str.contains("fc").any()
    assert not on_gpu.str.contains("relu").any()


def test_bad_parameters_are_config_errors():
    with pytest.raises(ConfigError, match="mode"):
        run({"name": "cappuccino", "mode": "sloppy"})
    with pytest.raises(ConfigError, match="accuracy_loss"):
        run({"name": "cappuccino", "accuracy_loss": 2})
