"""The Mandheling policies on the three phones: CPU configurations, baselines, Mandheling."""

from __future__ import annotations

import re

import pytest

import simulator
from policies.mandheling.cpu import thread_pool
from simulator.engine.simulation import simulate
from simulator.errors import ConfigError
from simulator.spec.experiment import ExperimentSpec

VGG11 = {"model": "vgg11", "mode": "training", "input_size": 32, "num_classes": 10,
         "options": {"batch_norm": False}}


def _run(soc: str, policy: dict, workload: dict, **extra):
    exp = ExperimentSpec.model_validate({
        "name": "t", "soc": soc, "workload": workload, "policy": policy,
        "outputs": {"timeline": False, "sample_period": "100 ms"}, **extra})
    return simulate(exp)


def _pool(soc: str, cpu: str) -> list[tuple[str, int, float]]:
    specs = simulator.load_soc(soc).processors()
    return [(p.processor, p.units, round(f, 3)) for p, f in thread_pool(specs, cpu, "mnn")]


def test_big_means_prime_and_gold_and_all_big_cores_on_two_big_core_socs():
    assert _pool("snapdragon888", "big4") == [("cpu.prime", 1, 0.25), ("cpu.gold", 3, 0.75)]
    assert _pool("snapdragon888", "big2") == [("cpu.prime", 1, 0.5), ("cpu.gold", 1, 0.5)]
    assert _pool("snapdragon888", "big1") == [("cpu.prime", 1, 1.0)]
    assert _pool("snapdragon888", "little4") == [("cpu.silver", 4, 1.0)]
    assert [u for _, u, _ in _pool("snapdragon888", "all8")] == [1, 3, 4]
    assert _pool("snapdragon750g", "big4") == [("cpu.big", 2, 1.0)]
    assert _pool("snapdragon750g", "all8") == [("cpu.big", 2, 0.25), ("cpu.little", 6, 0.75)]


def test_unknown_cpu_configuration_is_a_config_error():
    with pytest.raises(ConfigError, match="cpu"):
        _run("snapdragon865", {"name": "mnn-fp32", "cpu": "big3"},
             {"model": "lenet5", "mode": "training", "batch": 4})


def test_cpu_freq_min_pins_the_phones_frequency_floor_and_slows_training():
    # compute-bound (MNN's per-operator cost is time, not cycles: a tiny model barely slows)
    workload = {**VGG11, "batch": 8}
    low = _run("snapdragon888", {"name": "mnn-fp32", "cpu": "big1", "cpu_freq": "min"},
               workload).metrics
    high = _run("snapdragon888", {"name": "mnn-fp32", "cpu": "big1", "cpu_freq": "max"},
                workload).metrics
    floor = simulator.load_soc("snapdragon888").cpu["prime"].min_frequency
    assert floor > simulator.load_soc("snapdragon888").cpu["prime"].opps[0].frequency
    assert low["min_freq_cpu.prime_hz"] == pytest.approx(floor)
    assert high["min_freq_cpu.prime_hz"] == pytest.approx(2841.6e6)
    assert low["latency_s"] > 2 * high["latency_s"]


def test_the_fp32_baselines_refuse_an_integer_workload():
    with pytest.raises(ConfigError, match="FP32"):
        _run("snapdragon865", {"name": "mnn-fp32"},
             {"model": "lenet5", "mode": "training", "batch": 4, "algorithm": "niti"})


def test_mnn_int8_runs_the_integer_algorithm_on_the_cpu():
    result = _run("snapdragon865", {"name": "mnn-int8", "cpu": "big1"},
                  {**VGG11, "batch": 8})
    assert set(result.kernels["processor"]) == {"cpu.prime"}
    assert result.kernels["label"].str.contains("reduce_max").any()


def test_a_training_step_too_big_for_the_gpu_is_an_oom_result():
    table = simulator.run({
        "name": "oom", "soc": "snapdragon888",
        "workload": {"model": "vgg19", "mode": "training", "batch": 64, "input_size": 224},
        "policy": {"name": "mnn-gpu"}})
    assert table["status"].tolist() == ["oom"]
    assert "GiB" in table["error"][0] and table["oom"][0] == 1.0


@pytest.fixture(scope="module")
def mandheling_runs():
    """VGG-11 batch 32 on SD865 with every technique, and with none but co-scheduling."""
    workload = {**VGG11, "batch": 32, "iterations": 4}
    full = _run("snapdragon865", {"name": "mandheling"}, workload,
                dvfs={"governor": "performance"})
    none = _run("snapdragon865", {"name": "mandheling", "adaptive_rescaling": False,
                                  "subgraph_reuse": False, "batch_splitting": False,
                                  "parallel": False}, workload,
                dvfs={"governor": "performance"})
    return full, none


def test_each_batch_runs_a_layer_either_static_or_rescaling_never_both(mandheling_runs):
    full, _ = mandheling_runs
    label = full.kernels["label"].str.replace(r"^[^:]*:|\[.*$", "", regex=True)
    kernels = full.kernels.assign(
        operator=label.str.replace(r"\.(?:mb\d+|static|reduce_max|shift|rerun)", "",
                                   regex=True),
        static=label.str.endswith(".static"),  # on the DSP: copies of the re-run
        rescale=label.str.contains(r"\.(?:reduce_max|shift)") & ~label.str.endswith(".static"))
    assert kernels["static"].any()
    for iteration, frame in kernels.groupby("iteration"):
        both = set(frame.loc[frame["static"], "operator"]) & set(
            frame.loc[frame["rescale"], "operator"])
        assert not both, (iteration, sorted(both)[:3])  # split ReduceMax/Shift parts too


def test_mandheling_puts_integer_work_on_the_dsp_and_fp32_work_on_the_cpu(mandheling_runs):
    full, _ = mandheling_runs
    kernels = full.kernels
    on_dsp = kernels[kernels["processor"] == "dsp"]
    # conv operators (their micro-batches, static versions and thread parts as one)
    operator = kernels["label"].str.extract(r":([\w.]*conv\d\.(?:fwd|bwd_data|bwd_weight))"
                                            r"(?:\.mb\d+)?(?:\.shift\.rerun)?(?:\.mb\d+)?"
                                            r"(?:\.static)?(?:\[|$)")[0]
    convs = kernels.assign(operator=operator).dropna(subset=["operator"])
    dsp_operators = set(convs.loc[convs["processor"] == "dsp", "operator"])
    # the DP keeps the cheap-on-the-CPU ends (the 32x32 forward convs, the small last
    # layers and their updates, whose weights would otherwise cross every batch) on
    # the CPU pool; a large share of the conv operators still runs on the DSP
    assert len(dsp_operators) > 0.4 * convs["operator"].nunique()
    assert not on_dsp["label"].str.contains("quantize|loss").any()
    assert full.metrics["mandheling.split_operators"] > 0
    assert full.metrics["completed"] == 1.0


def test_prepared_subgraphs_are_reused_after_the_first_batch(mandheling_runs):
    full, none = mandheling_runs
    prepare = {name: run.kernels[run.kernels["label"].str.endswith(".prepare")]
               for name, run in (("full", full), ("none", none))}
    assert set(prepare["full"]["iteration"]) == {0}  # everything fits the DSP budget
    assert set(prepare["none"]["iteration"]) == {0, 1, 2, 3}


def test_the_techniques_together_beat_co_scheduling_alone(mandheling_runs):
    full, none = mandheling_runs
    assert full.metrics["latency_s"] < none.metrics["latency_s"]
    assert full.metrics["energy_j"] < none.metrics["energy_j"]


def test_self_adaptive_rescaling_mostly_skips_the_dynamic_rescale(mandheling_runs):
    full, none = mandheling_runs
    assert full.metrics["mandheling.rescale_fraction"] < 0.5
    assert none.metrics["mandheling.rescale_fraction"] == 1.0
    labels = full.kernels["label"]
    assert labels.str.contains(r"\.static").any()


def test_mandheling_is_deterministic_under_a_seed():
    workload = {**VGG11, "batch": 16, "iterations": 3}
    first = _run("snapdragon888", {"name": "mandheling"}, workload, seed=5).metrics
    again = _run("snapdragon888", {"name": "mandheling"}, workload, seed=5).metrics
    assert first == again


def test_the_other_mandheling_phones_reuse_the_sd888_and_sd865_fits():
    """Copies of fits (the schema has no inheritance) must stay equal to their source."""
    sd888, sd865 = simulator.load_soc("snapdragon888"), simulator.load_soc("snapdragon865")
    a78, a55 = sd888.cpu["gold"].libraries["mnn"], sd888.cpu["silver"].libraries["mnn"]
    for name, big, little in (("snapdragon865", ("prime", "gold"), ("silver",)),
                              ("snapdragon750g", ("big",), ("little",))):
        soc = simulator.load_soc(name)
        for cluster in big:
            assert soc.cpu[cluster].libraries["mnn"].efficiency == a78.efficiency, cluster
        for cluster in little:
            assert soc.cpu[cluster].libraries["mnn"] == a55, cluster
        for cluster in big + little:
            assert soc.cpu[cluster].power.precision_activity == \
                sd888.cpu["gold"].power.precision_activity, cluster
        assert soc.gpu.libraries["mnn"].dispatch_overhead == \
            sd888.gpu.libraries["mnn"].dispatch_overhead
    for name in ("snapdragon888", "snapdragon750g"):
        assert simulator.load_soc(name).dsp.libraries == sd865.dsp.libraries, name


def test_every_weighted_layer_rescales_in_all_three_passes_and_once_per_gradient(
        mandheling_runs):
    full, none = mandheling_runs
    label = none.kernels["label"].str.replace(r"^[^:]*:|\[.*$", "", regex=True)
    # a Shift, or on the DSP the operator's re-run with the found range (Hexagon NN)
    shift = r"(?:\.mb\d+)?\.shift(?:\.rerun(?:\.mb\d+)?)?$"
    sites = set(label[label.str.contains(shift)].str.replace(shift, "", regex=True))
    layers = {s.rsplit(".", 1)[0] for s in sites}
    assert len(layers) == 9  # VGG-11: 8 convs and the classifier
    for layer in layers:
        passes = {p for p in ("fwd", "bwd_data", "bwd_weight") if f"{layer}.{p}" in sites}
        # the first layer has no error gradient to propagate
        assert passes == ({"fwd", "bwd_weight"} if layer == "block1.conv1"
                          else {"fwd", "bwd_data", "bwd_weight"}), layer
    # a weight gradient's ReduceMax and Shift work on the whole (weight-sized) gradient:
    # batch splitting never cuts them into micro-batches
    for run in (full, none):
        assert not run.kernels["label"].str.contains(
            r"bwd_weight\.(?:reduce_max|shift)\.mb\d").any()


def test_a_rescaling_site_with_its_operator_on_the_dsp_reruns_the_operator_there(
        mandheling_runs):
    _, none = mandheling_runs  # every batch rescales
    label = none.kernels["label"].str.replace(r"^[^:]*:|\[.*$", "", regex=True)
    on_dsp = none.kernels["processor"] == "dsp"
    operators = set(label[on_dsp].str.replace(r"\.mb\d+$", "", regex=True))
    everywhere = set(label.str.replace(r"\.mb\d+$", "", regex=True))
    sites = {op for op in operators if op.endswith((".fwd", ".bwd_data", ".bwd_weight"))
             and f"{op}.reduce_max" in everywhere}
    assert len(sites) >= 5
    for op in sites:  # ReduceMax and the re-run follow the operator to the DSP
        assert f"{op}.shift.rerun" in operators, op
        assert not label.str.fullmatch(rf"{re.escape(op)}(?:\.mb\d+)?\.shift").any(), op


def test_mnn_gpu_trains_mnns_own_operators_each_a_synchronised_kernel():
    workload = {"model": "lenet5", "mode": "training", "batch": 4}
    gpu = _run("snapdragon888", {"name": "mnn-gpu"}, workload)
    cpu = _run("snapdragon888", {"name": "mnn-fp32", "cpu": "big1"}, workload)
    labels = gpu.kernels["label"].str.replace(r"^[^:]*:|\[.*$", "", regex=True)
    # MNN's decomposed operators (weight repacking, the cross-entropy ops, SGD passes)
    assert labels.str.contains("weight_repack").any()
    assert set(gpu.kernels["processor"]) == {"gpu"}
    assert len(gpu.kernels) == len(cpu.kernels)  # the same graph as MNN's CPU backend
