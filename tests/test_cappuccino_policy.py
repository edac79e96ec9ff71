"""Cappuccino and its baselines on the Cappuccino phones, as API demos.

Modes chosen under an accuracy limit, vector lanes with and without map-major
order, output-level parallelism on the CPU or the GPU, the Java baseline on one
core, CNNdroid's RenderScript layers wrapped in Java.
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


def test_the_caffe_forms_share_their_networks_entry():
    # the paper's AlexNet and GoogLeNet are the Caffe forms the checks run: an alias each
    table = load_accuracy()
    for alias, network in (("alexnet_caffe", "alexnet"), ("googlenet_caffe", "googlenet")):
        assert table.models[alias] is table.models[network]
        assert table.loss(alias, "conv1", "imprecise") == 0.0


@pytest.mark.parametrize(("aliases", "message"), [
    ("{alexnet_caffe: vgg16}", "alias of 'vgg16'"),
    ("{alexnet: alexnet}", "'alexnet' has its own entry"),
])
def test_a_bad_alias_names_its_file_and_entry(tmp_path, aliases, message):
    path = tmp_path / "acc.yaml"
    path.write_text("models: {alexnet: {default: {imprecise: 0.0}}}\n"
                    f"aliases: {aliases}\n")
    with pytest.raises(ConfigError) as info:
        load_accuracy(path)
    assert message in str(info.value) and "acc.yaml" in str(info.value)
    assert "aliases." in str(info.value)


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


@pytest.mark.parametrize("op", ["lrn", "softmax", "tanh"])
def test_math_library_layers_keep_one_lane_on_the_cpu_only(op):
    # rs_cl.c's float4 pow/exp call the scalar function once per lane (CPU driver);
    # a GPU driver compiles them to its own instructions
    assert simd_waste({"op": op}, True) == pytest.approx(0.75)
    assert simd_waste({"op": op}, False, lanes=8) == pytest.approx(7 / 8)
    assert simd_waste({"op": op}, True, scalar_math=False) == 0.0


def test_grouped_convolutions_fill_lanes_per_group():
    grouped = {"op": "group_conv", "kernel": 5, "in_channels": 96, "groups": 2}
    assert simd_waste(grouped, True) == 0.0                      # 48 maps a group
    assert simd_waste({**grouped, "in_channels": 6}, True) == pytest.approx(0.25)  # 3 a group


def _devices_per_kernel(result) -> set[int]:
    """How many of {CPU, GPU} each original kernel ran on."""
    kernels = result.kernels.assign(
        base=result.kernels["label"].str.replace(r"^[^:]*:|\[\d+\]$", "", regex=True),
        device=result.kernels["processor"].str.split(".").str[0])
    return set(kernels.groupby("base")["device"].nunique())


def test_imprecise_mode_is_faster_than_exact_and_one_launch_runs_on_one_driver():
    exact = run({"name": "cappuccino", "mode": "exact"})
    imprecise = run({"name": "cappuccino", "mode": "imprecise"})
    assert set(exact.kernels["processor"]) == {"cpu.big"}  # GPU drivers need inexact floats
    assert imprecise.metrics["latency_s"] < exact.metrics["latency_s"] / 4
    assert imprecise.metrics["cappuccino.accuracy_loss"] == 0.0
    assert imprecise.metrics["cappuccino.inexact_layers"] > 0
    # a RenderScript launch runs on the CPU driver or the GPU driver, never both ...
    assert _devices_per_kernel(imprecise) == {1}
    # ... unless the idealised split across devices is asked for
    split = run({"name": "cappuccino", "mode": "imprecise", "cross_device_split": True},
                soc="snapdragon820")
    assert 2 in _devices_per_kernel(split)


def test_gpu_renderscript_is_load_bound_so_gains_differ_by_cnn():
    # without local memory every FMA loads its operands: the GPU no longer outruns the
    # CPU's float4 code by 4x, and what imprecise mode gains depends on the layers (exact
    # 1x1 layers pay a row loop per multiply-accumulate that map-major float4 code does not)
    gains = {}
    for model in ("alexnet", "squeezenet1_0"):
        exact = run({"name": "cappuccino", "mode": "exact"}, model=model)
        imprecise = run({"name": "cappuccino", "mode": "imprecise"}, model=model)
        gains[model] = exact.metrics["latency_s"] / imprecise.metrics["latency_s"]
        assert (imprecise.kernels["processor"] == "cpu.big").mean() > 0.5
    assert gains["squeezenet1_0"] > 1.2 * gains["alexnet"]


def test_lrn_gains_nothing_from_imprecise_mode_on_the_cpu_but_convolutions_do():
    def durations(mode: str, processors: list[str]) -> dict[str, float]:
        k = run({"name": "cappuccino", "mode": mode, "processors": processors},
                model="alexnet_caffe").kernels
        return dict(zip(k["label"].str.split(":").str[1], k["end_s"] - k["start_s"]))

    exact = durations("exact", ["cpu.big"])
    cpu = durations("imprecise", ["cpu.big"])
    # pow runs lane by lane: the float4 library with 1 lane of 4 is the scalar one
    assert cpu["norm1.fwd"] == pytest.approx(exact["norm1.fwd"], rel=0.05)
    assert cpu["conv3.fwd"] < exact["conv3.fwd"] / 3
    # a GPU driver has transcendental instructions: the same layer is not held back there
    both = durations("imprecise", ["cpu.big", "gpu"])
    assert both["norm1.fwd"] < cpu["norm1.fwd"] / 2


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


def test_cnndroid_wraps_full_precision_renderscript_layers_in_java_copies():
    result = run({"name": "cnndroid"}, model="alexnet", soc="snapdragon810")
    kernels = result.kernels.set_index(result.kernels["label"].str.replace(
        r"^[^:]*:", "", regex=True))
    # rs_fp_full scripts: the CPU driver runs them, on every cluster
    assert "gpu" not in set(kernels["processor"])
    assert {"conv1.fwd[0]", "conv1.fwd[1]"} <= set(kernels.index)
    # Java repacks the input and unpacks the output around each launch, one thread
    for step in ("repack", "copy_from", "copy_to", "unpack"):
        assert kernels.loc[f"conv1.fwd.{step}", "units"] == 1
    # the ReLU is folded into the unpack loop; pooling is 4-thread Java plus the polling
    assert not kernels.index.str.contains("relu").any()
    pool = kernels.loc["pool1.fwd"]
    assert pool["units"] == 4 and pool["duration_s"] > 2.5e-3
    # slower than Cappuccino's map-major float4 program on the same phone
    cappuccino = run({"name": "cappuccino", "mode": "imprecise"}, model="alexnet",
                     soc="snapdragon810")
    assert result.metrics["latency_s"] > 1.2 * cappuccino.metrics["latency_s"]


def test_cnndroid_float4_code_is_scalar_on_32_bit_arm():
    # ARMv7 NEON flushes denormals, so IEEE float4 code is VFP scalar code on the Krait;
    # AArch64 SIMD keeps IEEE floats, so the A57 runs it as vectors
    from policies.cappuccino.cnndroid import IEEE_SIMD, channel_padding_waste
    assert not IEEE_SIMD["krait-400"] and IEEE_SIMD["cortex-a57"]
    assert channel_padding_waste({"in_channels": 3, "groups": 1}) == pytest.approx(5 / 8)
    assert channel_padding_waste({"in_channels": 96, "groups": 2}) == 0.0
    krait = run({"name": "cnndroid"}, model="alexnet", soc="snapdragon800")
    exact = run({"name": "cappuccino", "mode": "exact"}, model="alexnet")
    assert krait.metrics["latency_s"] > exact.metrics["latency_s"]


def test_bad_parameters_are_config_errors():
    with pytest.raises(ConfigError, match="mode"):
        run({"name": "cappuccino", "mode": "sloppy"})
    with pytest.raises(ConfigError, match="accuracy_loss"):
        run({"name": "cappuccino", "accuracy_loss": 2})
