"""Mixed-precision algorithms: YAML loading and the translation of training traces."""

import pytest
import yaml

from simulator.errors import ConfigError
from workloads.generate import generate_trace
from workloads.mixed_precision import (
    ALGORITHM_DIR,
    algorithm_names,
    apply_algorithm,
    load_algorithm,
)

# Mandheling's table of data types (W / A / G / WU), as the YAML files state them.
PAPER_TYPES = {
    "niti": ("INT8", "INT8", "INT8", "INT8"),
    "octo": ("INT8", "INT8", "INT8", "INT8"),
    "adaptive_fixed_point": ("INT8-16", "INT8", "INT8", "FP32"),
    "wageubn": ("INT8", "INT8", "INT8", "FP24"),
    "mls": ("INT8", "INT8", "INT8", "FP32"),
}


@pytest.fixture(scope="module")
def fp32_step():
    return generate_trace("vgg11", mode="training", batch=4, stem="cifar")


@pytest.fixture(scope="module")
def niti_step(fp32_step):
    return apply_algorithm(fp32_step, "niti")


def rows_of(trace, layer, kind):
    table = trace.table
    return table[(table["layer"] == layer) & (table["pass"] == kind)]


def test_shipped_algorithms_load_with_their_data_types():
    assert algorithm_names() == sorted(PAPER_TYPES)
    for name, types in PAPER_TYPES.items():
        algo = load_algorithm(name)
        dt = algo.data_types
        paper = (dt.weights.paper, dt.activations.paper, dt.gradients.paper,
                 dt.weight_update.paper)
        assert paper == types and algo.mandheling_supported
    assert load_algorithm("wageubn").data_types.weight_update.trace == "fp32"


def test_niti_conv_becomes_int8_conv_reduce_max_shift(fp32_step, niti_step):
    steps = rows_of(niti_step, "block2.conv1", "fwd")
    assert list(steps["op"]) == ["conv", "reduce_max", "shift"]
    assert set(steps["precision"]) == {"int8"}
    conv, reduce_max, shift = (steps.iloc[i] for i in range(3))
    # the Shift re-reads the INT32 tensor: it depends on the conv, not only the max
    assert reduce_max["deps"] == (conv["id"],)
    assert shift["deps"] == (reduce_max["id"], conv["id"])
    original = rows_of(fp32_step, "block2.conv1", "fwd").iloc[0]
    elements = original["bytes_out"] / 4
    assert conv["flops"] == original["flops"]
    # Dynamic rescaling re-reads the INT32 accumulators: 4 bytes per element.
    assert conv["bytes_out"] == 4 * elements
    assert reduce_max["bytes_in"] == shift["bytes_in"] == 4 * elements
    assert shift["flops"] == 2 * elements and shift["bytes_out"] == elements


def test_niti_backward_and_fp32_only_ops(niti_step):
    error_grad = rows_of(niti_step, "block2.conv1", "bwd_data")
    assert list(error_grad["op"]) == ["weight_rotate", "deconv", "reduce_max", "shift"]
    weight_grad = rows_of(niti_step, "block2.conv1", "bwd_weight")
    assert list(weight_grad["op"]) == ["conv", "reduce_max", "shift"]
    for steps in (error_grad.iloc[1:], weight_grad):  # both backward Shifts read INT32
        compute, reduce_max, shift = (steps.iloc[i] for i in range(3))
        assert set(shift["deps"]) == {reduce_max["id"], compute["id"]}
    bn = rows_of(niti_step, "block2.conv1.bn", "fwd")
    assert list(bn["op"]) == ["dequantize", "batchnorm", "quantize"]
    assert set(bn["precision"]) == {"fp32"}
    loss = niti_step.table[niti_step.table["op"] == "loss"]
    assert list(loss["precision"]) == ["fp32"]
    pool = rows_of(niti_step, "block1.pool", "fwd")
    assert list(pool["precision"]) == ["int8"]


def test_the_model_input_is_quantised_first(niti_step):
    first = niti_step.table.iloc[0]
    assert (first["op"], first["precision"], first["layer"]) == ("quantize", "fp32", "input")
    conv = rows_of(niti_step, "block1.conv1", "fwd").iloc[0]
    assert conv["deps"] == (first["id"],)


@pytest.mark.parametrize("name, update", [("niti", "int8"), ("octo", "int8"),
                                          ("adaptive_fixed_point", "fp32"),
                                          ("wageubn", "fp32"), ("mls", "fp32")])
def test_translation_keeps_the_work_and_sets_update_precision(fp32_step, name, update):
    translated = apply_algorithm(fp32_step, name)
    table = translated.table
    updates = table[(table["op"] == "sgd_update")]
    assert set(updates["precision"]) == {update}
    # The original kernels survive under their names, with their flops (x scale).
    originals = fp32_step.table.set_index("name")
    kept = table[table["name"].isin(originals.index) & (table["pass"] != "update")]
    assert len(kept) == (fp32_step.table["pass"] != "update").sum()
    assert kept["flops"].sum() == pytest.approx(
        originals[originals["pass"] != "update"]["flops"].sum())
    assert translated.total_flops > fp32_step.total_flops


def test_generate_trace_applies_the_algorithm(niti_step):
    direct = generate_trace("vgg11", mode="training", batch=4, stem="cifar", algorithm="niti")
    assert direct.table.drop(columns="deps").equals(niti_step.table.drop(columns="deps"))
    assert list(direct.table["deps"]) == list(niti_step.table["deps"])


def test_unknown_algorithm_suggests_a_name():
    with pytest.raises(ConfigError, match="Did you mean 'niti'"):
        load_algorithm("nitti")


@pytest.mark.parametrize("edit, where", [
    (lambda d: d["translation"]["rules"][0]["match"].update(kernel=3),
     "translation.rules[0].match.kernel"),
    (lambda d: d["backprop"]["rules"][0]["emit"].append({"op": "$op"}),
     "backprop.rules[0]: emit needs exactly one"),
    (lambda d: d["optimizer"]["update"][0].update(op="adam_step"), "optimizer.update[0].op"),
    (lambda d: d["data_types"]["weights"].update(trace="int4"), "data_types.weights.trace"),
])
def test_bad_algorithm_files_name_the_file_and_yaml_path(tmp_path, edit, where):
    data = yaml.safe_load((ALGORITHM_DIR / "niti.yaml").read_text())
    edit(data)
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as error:
        load_algorithm(path)
    assert str(error.value).startswith(f"{path}: {where}")
