"""Trace generation: inference and training kernels, costs, dependencies, files."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.errors import ConfigError
from simulator.trace import load_trace, save_trace
from workloads.generate import _memoised as generated_traces
from workloads.generate import generate_trace
from workloads.mixed_precision import ALGORITHM_DIR
from workloads.zoo import MODELS


def ancestors(trace) -> list[set[int]]:
    """Per row, the rows it (transitively) waits for."""
    result: list[set[int]] = []
    for preds in trace.preds:  # rows are in topological order
        found = set(preds)
        for pred in preds:
            found |= result[pred]
        result.append(found)
    return result


@pytest.fixture(scope="module")
def resnet_step():
    """One training step of the CIFAR ResNet-18, batch 8."""
    return generate_trace("resnet18", mode="training", batch=8, stem="cifar")


@pytest.mark.parametrize("model", MODELS.names())
def test_every_model_generates_in_both_modes_and_round_trips(model, tmp_path):
    small = {"input_size": 32} if model.startswith(("vgg", "resnet")) else {}
    for mode in ("inference", "training"):
        trace = generate_trace(model, mode=mode, batch=2, **small)
        path = tmp_path / f"{model}-{mode}.csv"
        save_trace(trace, path)
        again = load_trace(path)
        assert len(again) == len(trace)
        assert again.total_flops == pytest.approx(trace.total_flops)
        assert list(again.table["deps"]) == list(trace.table["deps"])
        assert set(trace.table["model"]) == {model}


def test_parquet_round_trip(resnet_step, tmp_path):
    save_trace(resnet_step, tmp_path / "step.parquet")
    assert load_trace(tmp_path / "step.parquet").table["flops"].sum() == resnet_step.total_flops


@pytest.mark.parametrize("model", MODELS.names())
def test_training_costs_about_three_times_inference(model):
    inference = generate_trace(model, batch=4)
    training = generate_trace(model, mode="training", batch=4)
    # the 2-layer LSTM: its first layer reads only the input, so it has no input gradient
    expected = {"lstm": 2.5}.get(model, 3.0)
    assert training.total_flops / inference.total_flops == pytest.approx(expected, rel=0.10)


def test_backward_kernels_wait_for_forward_and_updates_for_gradients(resnet_step):
    table = resnet_step.table
    before = ancestors(resnet_step)
    pairs = list(zip(table["layer"], table["pass"], strict=True))
    fwd_row = {layer: row for row, (layer, kind) in enumerate(pairs) if kind == "fwd"}
    loss_row = int(table.index[table["op"] == "loss"][0])
    for row, (layer, kind) in enumerate(pairs):
        if kind in ("bwd_data", "bwd_weight"):
            assert fwd_row[layer] in before[row], table["name"][row]
            assert loss_row in before[row]
        if kind == "update":
            weight_grad = table.index[(table["layer"] == layer)
                                      & (table["pass"] == "bwd_weight")]
            assert set(weight_grad) <= before[row]


def test_training_kernels_per_layer(resnet_step):
    table = resnet_step.table.set_index("name")
    # The first conv reads only the image: no error gradient.
    assert "stem.conv.bwd_data" not in table.index
    assert table.loc["stem.conv.bwd_weight", "op"] == "conv"
    assert table.loc["layer1.0.conv1.conv.bwd_data", "op"] == "deconv"
    # Batch norm has its own backward and update; its dx waits for dgamma/dbeta.
    for kind in ("bwd_data", "bwd_weight", "update"):
        assert f"layer1.0.conv1.bn.{kind}" in table.index
    # A residual input feeds two layers: its gradients are summed.
    assert table.loc["stem.relu.grad_sum", "op"] == "add"
    updates = table[table["pass"] == "update"]
    assert set(updates["op"]) == {"sgd_update"}
    assert updates["weight_bytes"].sum() == 4 * MODELS.get("resnet18")(stem="cifar").params


def test_costs_and_shape_columns():
    inference = generate_trace("vgg16", batch=2, stem="cifar").table.set_index("name")
    conv = inference.loc["block1.conv2.fwd"]
    assert conv["flops"] == 2 * 2 * (64 * 32 * 32) * (64 * 9)
    assert conv["bytes_in"] == 2 * 64 * 32 * 32 * 4
    assert conv["weight_bytes"] == (64 * 64 * 9 + 64) * 4
    assert (conv["in_channels"], conv["out_h"], conv["kernel"], conv["stride"]) == (64, 32, 3, 1)
    assert inference.loc["block1.conv2.bn.fwd", "flops"] == 2 * 2 * 64 * 32 * 32
    assert inference.loc["block1.conv2.relu.fwd", "flops"] == 2 * 64 * 32 * 32
    assert inference.loc["fc.fwd", "in_channels"] == 512


def test_precision_sets_element_size():
    fp32 = generate_trace("mobilenet_v2", mode="training").table
    int8 = generate_trace("mobilenet_v2", mode="training", precision="int8").table
    assert set(int8["precision"]) == {"int8"}
    assert int8["bytes_in"].sum() * 4 == fp32["bytes_in"].sum()
    assert int8["flops"].sum() == fp32["flops"].sum()


@settings(max_examples=15, deadline=None)
@given(batch=st.integers(1, 256), mode=st.sampled_from(["inference", "training"]))
def test_work_scales_with_batch_except_the_update(batch, mode):
    one = generate_trace("lenet5", mode=mode).table
    many = generate_trace("lenet5", mode=mode, batch=batch).table
    per_sample = many["pass"] != "update"
    assert many["flops"][per_sample].sum() == batch * one["flops"][per_sample].sum()
    assert many["flops"][~per_sample].sum() == one["flops"][~per_sample].sum()
    # Activations scale with the batch; weights and weight gradients do not.
    activations = many["pass"].isin(["fwd", "bwd_data"])
    assert (many["bytes_out"][activations].sum()
            == batch * one["bytes_out"][activations].sum())
    assert many["weight_bytes"].sum() == one["weight_bytes"].sum()
    assert set(many["batch"]) == {batch}


def test_generation_is_deterministic():
    generated_traces.cache_clear()  # generate twice, not once and copy
    a = generate_trace("googlenet", mode="training", batch=2).table
    generated_traces.cache_clear()
    b = generate_trace("googlenet", mode="training", batch=2).table
    assert a.equals(b)


def test_a_kept_trace_is_handed_out_as_a_copy_callers_may_change():
    first = generate_trace("resnet18", batch=2)
    first.table.loc[0, "flops"] = -1.0
    first.table["deps"] = [()] * len(first.table)
    first.preds[1] = (99,)
    first.index_of.clear()
    again = generate_trace("resnet18", batch=2)
    generated_traces.cache_clear()
    fresh = generate_trace("resnet18", batch=2)
    assert again.table.equals(fresh.table)
    assert (again.preds, again.succs, again.index_of) == (fresh.preds, fresh.succs,
                                                          fresh.index_of)


def test_an_edited_algorithm_file_is_read_again(tmp_path):
    path = tmp_path / "mine.yaml"
    text = (ALGORITHM_DIR / "niti.yaml").read_text()
    path.write_text(text)
    before = generate_trace("lenet5", mode="training", algorithm=path).total_flops
    shift = "{op: shift, input: int32, flops_per_element: 2}"
    assert shift in text
    path.write_text(text.replace(shift, shift.replace(": 2}", ": 20}")))
    after = generate_trace("lenet5", mode="training", algorithm=path).total_flops
    assert after > before


def test_parameters_equal_in_value_but_not_in_type_are_kept_apart():
    # 1 == 1.0 == True: a memo keyed on equality would hand one out for the others
    generated_traces.cache_clear()
    generate_trace("mobilenet_v2", width=1)
    generate_trace("mobilenet_v2", width=1.0)
    generate_trace("mobilenet_v2", width=1.0)
    assert generated_traces.cache_info().currsize == 2


@pytest.mark.parametrize("kwargs, message", [
    ({"model": "resnet19"}, "Did you mean"),
    ({"model": "googlenet", "width": 0.5}, "no parameter"),
    ({"model": "vgg16", "depth": 3}, "no parameter"),
    ({"model": "vgg16", "mode": "train"}, "mode must be"),
    ({"model": "vgg16", "batch": 0}, "batch must be"),
    ({"model": "vgg16", "precision": "bf16"}, "precision must be"),
    ({"model": "vgg16", "precision": "int8", "algorithm": "niti"}, "cannot be combined"),
])
def test_bad_requests_are_config_errors(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        generate_trace(**kwargs)
