"""Training frameworks as data (workloads/frameworks): MNN's and TFLite's operators."""

from __future__ import annotations

import pytest

from simulator.engine.simulation import simulate
from simulator.errors import ConfigError
from simulator.spec.experiment import ExperimentSpec
from workloads.frameworks import FRAMEWORKS, apply_framework, load_framework
from workloads.generate import generate_trace


def _by_layer(trace, layer):
    table = trace.table
    return table[table["layer"] == layer]


def test_shipped_frameworks_load_and_cite_their_source():
    assert {"mnn", "tflite"} <= set(FRAMEWORKS.names())
    for name in FRAMEWORKS.names():
        framework = load_framework(name)
        assert framework.source and all(rule.source for rule in framework.rules)


def test_an_inference_trace_is_unchanged():
    trace = generate_trace("resnet18", "inference")
    assert apply_framework(trace, "mnn") is trace


def test_mnn_batch_norm_in_training_is_nine_passes_forward_and_twelve_backward():
    trace = apply_framework(generate_trace("mobilenet_v2_mnn", "training", batch=2), "mnn")
    bn = _by_layer(trace, "stem.bn") if "stem.bn" in set(trace.table["layer"]) else None
    if bn is None:  # the first batch norm, whatever its name
        first = trace.table[trace.table["name"].str.endswith(".to_nchw")].iloc[0]["layer"]
        bn = _by_layer(trace, first)
    counts = bn.groupby("pass").size()
    assert counts["fwd"] == 9
    assert counts["bwd_weight"] + counts["bwd_data"] == 12  # no variance gradient
    forward = bn[bn["pass"] == "fwd"]
    elements = forward.iloc[0][["batch", "out_channels", "out_h", "out_w"]].prod()
    # 9 full passes read the activation (the two reductions write per-channel sums)
    assert forward["bytes_in"].sum() == pytest.approx(9 * elements * 4)
    assert set(forward["op"]) == {"layout", "reduce_sum", "add", "mul"}


def test_mnn_conv_weight_gradient_materialises_im2col():
    trace = apply_framework(generate_trace("lenet_mnn", "training", batch=4), "mnn")
    conv2 = _by_layer(trace, "conv2")
    im2col = conv2[conv2["op"] == "im2col"].iloc[0]
    # in_channels * k^2 * out_h * out_w * batch, 4-byte floats
    assert im2col["bytes_out"] == 20 * 25 * 8 * 8 * 4 * 4
    assert im2col["pass"] == "bwd_weight"
    # the bias gradient is a reduction of dy per output channel
    assert (conv2["name"] == "conv2.bwd_weight.bias_grad").sum() == 1


def test_mnn_sgd_is_eleven_passes_per_parameter_tensor():
    trace = apply_framework(generate_trace("lenet_mnn", "training", batch=1), "mnn")
    update = trace.table[trace.table["pass"] == "update"]
    # 4 layers with weight and bias: 8 tensors x 11 passes, no abstract update left
    assert len(update) == 88
    assert "sgd_update" not in set(update["op"])
    ip1 = update[update["layer"] == "ip1"]
    sizes = sorted(set(ip1["bytes_out"]))
    assert sizes == [500 * 4, 800 * 500 * 4]  # bias and weight, separately


def test_rewritten_trace_keeps_the_dependency_order():
    base = generate_trace("lenet_mnn", "training", batch=2)
    trace = apply_framework(base, "mnn")
    table = trace.table.set_index("id")
    # every kernel's dependencies come earlier (a valid topological order)
    for kid, deps in table["deps"].items():
        assert all(d < kid for d in deps)
    # the first update step still waits for the layer's weight gradient
    first_update = table[table["pass"] == "update"].iloc[0]
    dep = table.loc[first_update["deps"][0]]
    assert dep["pass"] in ("bwd_weight", "bwd_data")


def test_tflite_keeps_the_gradients_and_expands_the_optimizer():
    base = generate_trace("lenet5", "training", batch=2)
    trace = apply_framework(base, "tflite")
    kept = base.table[base.table["pass"] != "update"]
    assert len(trace.table[trace.table["pass"] != "update"]) == len(kept)
    assert len(trace.table[trace.table["pass"] == "update"]) == 4 * 2 * 5  # 5 layers, w+b


def test_a_bad_framework_file_names_the_file_and_path(tmp_path):
    bad = tmp_path / "fw.yaml"
    bad.write_text("name: x\ntitle: t\nsource: s\nrules:\n  - note: n\n    source: s\n"
                   "    match: {op: [conv]}\n    emit: [{op: convolve}]\n")
    with pytest.raises(ConfigError) as err:
        load_framework(bad)
    assert str(bad) in str(err.value) and "rules" in str(err.value)
    with pytest.raises(ConfigError, match="mnnn"):
        load_framework("mnnn")


def test_the_mnn_policy_runs_mnns_operators():
    result = simulate(ExperimentSpec.model_validate({
        "name": "t", "soc": "snapdragon855",
        "workload": {"model": "lenet_mnn", "mode": "training", "batch": 2, "iterations": 1},
        "policy": {"name": "mnn-fp32", "cpu": "big1"}}), audit=True)
    expected = len(apply_framework(generate_trace("lenet_mnn", "training", batch=2),
                                   "mnn").table)
    assert result.metrics["kernels"] == expected
