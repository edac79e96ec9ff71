"""Importers: mobile-ml-benchmark op lists and ONNX models -> kernel traces."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import onnx
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from simulator.errors import ConfigError
from simulator.importers import describe, run_importer
from simulator.registry import IMPORTERS
from simulator.trace import load_trace
from workloads.importers import ImporterWarning
from workloads.importers.mobile_ml_benchmark import (
    Op,
    import_mobile_ml_benchmark,
    infer_deps,
)
from workloads.importers.onnx_model import onnx_to_trace

DATA_DIR = Path(os.environ.get("SOCSIM_DATA_DIR",
                               Path(__file__).resolve().parents[1] / ".." / "shared" / "data"))
BENCH_DIR = DATA_DIR / "mobile-ml-benchmark"

HEADER = "model,operation,feature,pixel4|gpu|float\n"


def feature(i, c, o, s="1", k="1", f="-", g="1", flops="-"):
    """A feature cell as the benchmark writes it (a quoted Python-dict string)."""
    d = {"Input_shape": str(i), "Input_channel": c, "Output_shape": str(o), "Stride": str(s),
         "Kernel": str(k), "Filter": str(f), "Group": str(g), "FLOPS": str(flops)}
    return '"' + repr(d) + '"'


def ops_csv(tmp_path, rows, model="m", header=HEADER):
    """Write an ops CSV: rows are (operation, feature cell) pairs."""
    path = tmp_path / "ops.csv"
    lines = [f"{model},{op},{feat},1.0" for op, feat in rows]
    path.write_text(header + "\n".join(lines) + "\n")
    return path


def deps_of(trace):
    return [tuple(d) for d in trace.table.sort_values("id")["deps"]]


# ---------------------------------------------------------------- registry


def test_both_importers_are_registered_with_a_description():
    names = dict(describe())
    assert {"mobile-ml-benchmark", "onnx"} <= set(names)
    assert all(text and "\n" not in text for text in names.values())
    assert "onnx" in IMPORTERS


def test_run_importer_rejects_unknown_format_and_option(tmp_path):
    path = ops_csv(tmp_path, [("CONV_2D", feature(8, 3, 8, f=4))])
    with pytest.raises(ConfigError, match="unknown importer 'onx'.*Did you mean 'onnx'"):
        run_importer("onx", path, tmp_path / "out")
    with pytest.raises(ConfigError, match="no option.*batch.*known: precision"):
        run_importer("mobile-ml-benchmark", path, tmp_path / "out", batch=2)
    with pytest.raises(ConfigError, match="input file not found"):
        run_importer("mobile-ml-benchmark", tmp_path / "nope.csv", tmp_path / "out")


# ------------------------------------------------------ mobile-ml-benchmark


def test_operations_map_to_kinds_with_flops_bytes_and_weights(tmp_path):
    rows = [
        ("CONV_2D", feature(10, 3, 4, s=2, k=3, f=8, flops=2 * 4 * 4 * 8 * 3 * 9)),
        ("DEPTHWISE_CONV_2D", feature(6, 8, 4, k=3, f=1, flops=2 * 4 * 4 * 8 * 9)),
        ("CONV_2D_GROUP", feature(4, 8, 4, k=1, f=16, g=4, flops=2 * 16 * 16 * 2)),
        ("MAX_POOL_2D", feature(4, 16, 2, s=2, k=2, flops=2 * 2 * 16 * 4)),
        ("AVERAGE_POOL_2D", feature(2, 16, 1, k=2, flops=16 * 4)),
        ("MEAN", feature(1, 16, 16, k=0, flops=16)),
        ("FULLY_CONNECTED", feature("-", 16, "-", s="-", k="-", f=10, g="-", flops=320)),
    ]
    trace = import_mobile_ml_benchmark(ops_csv(tmp_path, rows), None)["m"]
    t = trace.table.sort_values("id").reset_index(drop=True)
    assert list(t["op"]) == ["conv", "dwconv", "group_conv", "maxpool", "avgpool", "global_pool", "fc"]
    assert list(t["flops"]) == [2 * 4 * 4 * 8 * 27, 2 * 16 * 8 * 9, 2 * 16 * 16 * 2,
                                256, 64, 16, 320]
    assert list(t["groups"]) == [1, 8, 4, 0, 0, 0, 1]
    # fp32: 4 bytes per element; weights include one bias per output channel.
    assert t["bytes_in"][0] == 10 * 10 * 3 * 4 and t["bytes_out"][0] == 4 * 4 * 8 * 4
    assert t["weight_bytes"][0] == (3 * 3 * 3 * 8 + 8) * 4
    assert t["weight_bytes"][1] == (9 * 8 + 8) * 4
    assert t["weight_bytes"][2] == (2 * 16 + 16) * 4
    assert t["weight_bytes"][6] == (16 * 10 + 10) * 4
    assert list(t["weight_bytes"][3:6]) == [0, 0, 0]
    assert set(t["precision"]) == {"fp32"} and set(t["pass"]) == {"fwd"}
    assert set(t["batch"]) == {1} and set(t["model"]) == {"m"}
    assert deps_of(trace) == [(), (0,), (1,), (2,), (3,), (4,), (5,)]


def test_missing_flops_are_computed_from_shapes_and_precision_sets_element_size(tmp_path):
    path = ops_csv(tmp_path, [("CONV_2D", feature(8, 3, 8, k=1, f=4))])
    fp32 = import_mobile_ml_benchmark(path, None)["m"].table.iloc[0]
    int8 = import_mobile_ml_benchmark(path, None, precision="int8")["m"].table.iloc[0]
    assert fp32["flops"] == 2 * 8 * 8 * 4 * 3
    assert int8["precision"] == "int8"
    assert int8["bytes_in"] * 4 == fp32["bytes_in"]
    assert int8["weight_bytes"] * 4 == fp32["weight_bytes"]


def test_fire_module_branches_share_their_input_and_join_at_the_concat(tmp_path):
    # SqueezeNet fire: squeeze 1x1, then expand 1x1 and expand 3x3 (input 57 = 55 + padding).
    rows = [
        ("CONV_2D", feature(55, 64, 55, f=16)),
        ("CONV_2D", feature(55, 16, 55, f=64)),
        ("CONV_2D", feature(57, 16, 55, k=3, f=64)),
        ("CONCATENATION", feature(55, 64, 55, s="-", k=2, f=128, g="-")),
        ("CONV_2D", feature(55, 128, 55, f=16)),
    ]
    trace = import_mobile_ml_benchmark(ops_csv(tmp_path, rows), None)["m"]
    assert deps_of(trace) == [(), (0,), (0,), (1, 2), (3,)]
    concat = trace.table.set_index("id").loc[3]
    assert concat["op"] == "concat" and concat["flops"] == 0
    assert concat["bytes_in"] == concat["bytes_out"] == 55 * 55 * 128 * 4


def test_ghost_module_and_residual_join(tmp_path):
    # Ghost module (conv, depthwise of it, concat of both) plus a shortcut conv from the
    # block input; the residual ADD of the two is absent from the format.
    rows = [
        ("CONV_2D", feature(8, 3, 8, f=3)),                                # 0 block input
        ("CONV_2D", feature(8, 3, 8, f=8)),                                # 1 primary
        ("DEPTHWISE_CONV_2D", feature(10, 8, 8, k=3, f=1)),                # 2 cheap
        ("CONCATENATION", feature(8, 8, 8, s="-", k=2, f=16, g="-")),      # 3 ghost output
        ("CONV_2D", feature(10, 3, 8, k=3, f=16)),                         # 4 shortcut of 0
        ("CONV_2D", feature(8, 16, 8, f=32)),                              # 5 reads 3 + 4
    ]
    trace = import_mobile_ml_benchmark(ops_csv(tmp_path, rows), None)["m"]
    assert deps_of(trace) == [(), (0,), (1,), (1, 2), (0,), (3, 4)]


def test_squeeze_excitation_branch_joins_the_next_op(tmp_path):
    rows = [
        ("DEPTHWISE_CONV_2D", feature(30, 72, 28, k=3, f=1)),   # 0
        ("MEAN", feature(28, 72, 72, k=1)),                     # 1 squeeze
        ("CONV_2D", feature(1, 72, 1, f=18)),                   # 2
        ("CONV_2D", feature(1, 18, 1, f=72)),                   # 3 excitation (1x1x72)
        ("CONV_2D", feature(28, 72, 28, f=20)),                 # 4 reads 0 x 3 (fused MUL)
    ]
    trace = import_mobile_ml_benchmark(ops_csv(tmp_path, rows), None)["m"]
    assert deps_of(trace) == [(), (0,), (1,), (2,), (0, 3)]


def test_concat_prefers_outputs_the_network_has_not_moved_past(tmp_path):
    # HarDNet-style block: each layer is conv 1x1 -> depthwise 3x3 and reads a concat of
    # earlier layers (L0 = 16 ch, L1 = 4, L2 = 6, L3 = 4, L4 = 10); the block output
    # concatenates L1, L3, L4. Convs whose depthwise output was already used are
    # tried last, so the output concat picks L1 (op 2), not the conv before L3 (op 6).
    def layer(c_in, c_out):
        return [("CONV_2D", feature(8, c_in, 8, f=c_out)),
                ("DEPTHWISE_CONV_2D", feature(10, c_out, 8, k=3, f=1))]

    def concat(n, total):
        return [("CONCATENATION", feature(8, 4, 8, s="-", k=n, f=total, g="-"))]

    rows = ([("CONV_2D", feature(8, 3, 8, f=16))] + layer(16, 4) + concat(2, 20)
            + layer(20, 6) + layer(6, 4) + concat(3, 26) + layer(26, 10) + concat(3, 18))
    deps = deps_of(import_mobile_ml_benchmark(ops_csv(tmp_path, rows), None)["m"])
    assert deps[3] == (0, 2)
    assert deps[8] == (0, 5, 7)
    assert deps[11] == (2, 7, 10)


def test_fc_after_flatten_matches_by_element_count(tmp_path):
    rows = [("MAX_POOL_2D", feature(4, 8, 2, s=2, k=2)),
            ("CONV_2D", feature(2, 8, 2, f=8)),
            ("FULLY_CONNECTED", feature("-", 2 * 2 * 8, "-", s="-", k="-", f=10, g="-"))]
    trace = import_mobile_ml_benchmark(ops_csv(tmp_path, rows), None)["m"]
    assert deps_of(trace)[2] == (1,)


_KINDS = st.sampled_from(["conv", "dwconv", "maxpool", "global_pool", "fc", "concat"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_KINDS, st.sampled_from([1, 2, 4]), st.sampled_from([4, 8]),
                          st.integers(1, 3)), min_size=1, max_size=25))
def test_inferred_dependencies_always_form_a_dag_reaching_back(spec):
    ops = [Op(row, "X", kind, size, ch, size, ch, 1, 1, 1, 0, 0, n)
           for row, (kind, size, ch, n) in enumerate(spec, start=1)]
    deps = infer_deps(ops)
    assert deps[0] == ()
    for i, row_deps in enumerate(deps[1:], start=1):
        assert row_deps and all(0 <= d < i for d in row_deps)
        assert len(set(row_deps)) == len(row_deps)


def test_one_trace_file_per_model_is_written_and_loads(tmp_path):
    path = tmp_path / "ops.csv"
    path.write_text(HEADER
                    + f"alpha,CONV_2D,{feature(8, 3, 8, f=4)},1\n"
                    + f"beta/v2,CONV_2D,{feature(8, 3, 8, f=2)},1\n"
                    + f"alpha,MEAN,{feature(8, 4, 4, k=0)},1\n")
    written = run_importer("mobile-ml-benchmark", path, tmp_path / "traces")
    assert [p.name for p in written] == ["alpha.csv", "beta_v2.csv"]
    alpha = load_trace(written[0])
    assert list(alpha.table["op"]) == ["conv", "global_pool"]
    assert alpha.total_flops == 2 * 64 * 4 * 3 + 64 * 4


def test_unknown_operation_names_file_and_row(tmp_path):
    path = ops_csv(tmp_path, [("CONV_2D", feature(8, 3, 8, f=4)),
                              ("RESIZE_BILINEAR", feature(8, 4, 16))])
    with pytest.raises(ConfigError) as err:
        import_mobile_ml_benchmark(path, None)
    message = str(err.value)
    assert str(path) in message and "row 2, column operation" in message
    assert "RESIZE_BILINEAR" in message and "\n" not in message


def test_missing_column_names_file_and_header(tmp_path):
    path = tmp_path / "ops.csv"
    path.write_text("model,op,feature\nm,CONV_2D,x\n")
    with pytest.raises(ConfigError, match=r"ops\.csv: header: missing column\(s\) operation"):
        import_mobile_ml_benchmark(path, None)


@pytest.mark.parametrize("cell, expected", [
    ('"{\'Input_shape\': \'8\', "', "must be a Python dict literal"),
    ('"[1, 2]"', "must be a Python dict literal"),
    ('"{\'Input_shape\': \'8\', \'Input_channel\': 3}"', "feature Output_shape is missing"),
    (feature("eight", 3, 8, f=4), "feature Input_shape must be a positive integer of at "
                                  "most 2147483647; got 'eight'"),
    (feature(8, -3, 8, f=4), "feature Input_channel must be a positive integer"),
    (feature(8, 0, 8, f=4), "feature Input_channel must be a positive integer"),  # no size
    (feature(0, 3, 8, f=4), "feature Input_shape must be a positive integer"),
    (feature(8, 3, 8, f=4 * 10**10), "feature Filter must be a positive integer of at most"),
    (feature(8, 6, 8, f=4, g=4), "Group 4 must divide Input_channel 6"),
])
def test_bad_feature_dict_names_file_row_and_column(tmp_path, cell, expected):
    path = ops_csv(tmp_path, [("CONV_2D", feature(8, 3, 8, f=4)), ("CONV_2D", cell)])
    with pytest.raises(ConfigError) as err:
        import_mobile_ml_benchmark(path, None)
    assert str(err.value).startswith(f"{path}: row 2, column feature: ")
    assert expected in str(err.value)


def test_bad_precision_and_output_that_is_a_file(tmp_path):
    path = ops_csv(tmp_path, [("CONV_2D", feature(8, 3, 8, f=4))])
    with pytest.raises(ConfigError, match="precision must be one of"):
        import_mobile_ml_benchmark(path, None, precision="fp64")
    with pytest.raises(ConfigError, match="output must be a directory"):
        import_mobile_ml_benchmark(path, path)


@pytest.mark.skipif(not (BENCH_DIR / "pixel4_ops_calibration.csv").is_file(),
                    reason="mobile-ml-benchmark data not present (set SOCSIM_DATA_DIR)")
def test_calibration_op_lists_match_end_to_end_flops(tmp_path):
    traces = import_mobile_ml_benchmark(BENCH_DIR / "pixel4_ops_calibration.csv", tmp_path)
    assert len(traces) == 30 and len(list(tmp_path.glob("*.csv"))) == 30
    e2e = pd.read_csv(BENCH_DIR / "pixel4_e2e_calibration.csv").set_index("model")["FLOPS"]
    ratios = pd.Series({m: t.total_flops / e2e[m] for m, t in traces.items()})
    # The op lists omit element-wise ops (ADD, SE multiplies, softmax), which the
    # e2e count includes: measured ratios are 0.982 (mobilenetv3) to 1.000.
    assert ratios.between(0.97, 1.0 + 1e-9).all(), ratios.sort_values().head()
    assert ratios.median() > 0.9999
    # fp32 weights (biases included) against the .tflite file size: 0.985-1.001 measured.
    size = pd.read_csv(BENCH_DIR / "pixel4_e2e_calibration.csv").set_index("model")["size"]
    weights = pd.Series({m: t.table["weight_bytes"].sum() / size[m] for m, t in traces.items()})
    assert weights.between(0.98, 1.01).all(), weights.sort_values().head()
    for trace in traces.values():
        sinks = {row for row in range(len(trace)) if not trace.succs[row]}
        assert len(sinks) == 1   # every inferred branch is joined back
        assert (trace.table["op"].isin(["conv", "group_conv", "dwconv", "fc"])
                == (trace.table["weight_bytes"] > 0)).all()


# --------------------------------------------------------------------- ONNX


def weight(name, *shape, dtype=np.float32):
    return numpy_helper.from_array(np.zeros(shape, dtype), name)


def model(nodes, inputs, initializers=(), outputs=None, opset=17):
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs]
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
               for n in (outputs or [nodes[-1].output[0]])]
    graph = helper.make_graph(nodes, "tiny", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def cnn():
    """conv 3->8 (3x3) -> relu -> depthwise 3x3 s2 -> global pool -> flatten -> MatMul fc."""
    return model([
        helper.make_node("Conv", ["x", "w", "b"], ["c1"], kernel_shape=[3, 3], pads=[1] * 4,
                         name="conv1"),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "dw"], ["c2"], kernel_shape=[3, 3], pads=[1] * 4,
                         group=8, strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["c2"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("MatMul", ["f", "fc"], ["y"]),
    ], [("x", ["N", 3, 32, 32])],
        [weight("w", 8, 3, 3, 3), weight("b", 8), weight("dw", 8, 1, 3, 3), weight("fc", 8, 10)])


def test_onnx_cnn_maps_ops_and_counts_flops_bytes_weights():
    result = onnx_to_trace(cnn(), batch=2)
    t = result.trace.table
    assert list(t["op"]) == ["conv", "relu", "dwconv", "global_pool", "reshape", "fc"]
    assert list(t["flops"]) == [2 * (2 * 8 * 32 * 32) * 27, 2 * 8 * 32 * 32,
                                2 * (2 * 8 * 16 * 16) * 9, 2 * 8 * 16 * 16, 0, 2 * 2 * 10 * 8]
    assert list(t["weight_bytes"]) == [(8 * 27 + 8) * 4, 0, 8 * 9 * 4, 0, 0, 80 * 4]
    assert t["bytes_in"][0] == 2 * 3 * 32 * 32 * 4 and t["bytes_out"][2] == 2 * 8 * 16 * 16 * 4
    assert [tuple(d) for d in t["deps"]] == [(), (0,), (1,), (2,), (3,), (4,)]
    conv = t.iloc[2]
    assert (conv["batch"], conv["in_channels"], conv["out_h"], conv["kernel"], conv["stride"],
            conv["groups"]) == (2, 8, 16, 3, 2, 8)
    assert result.warnings == [] and set(t["precision"]) == {"fp32"}


def test_onnx_dynamic_batch_defaults_to_one_with_a_warning():
    one = onnx_to_trace(cnn())
    four = onnx_to_trace(cnn(), batch=4)
    assert four.trace.total_flops == pytest.approx(4 * one.trace.total_flops)
    assert any("dynamic batch dim 'N' taken as 1" in w for w in one.warnings)


def test_onnx_symbolic_dim_other_than_batch_needs_dims():
    m = model([helper.make_node("Relu", ["x"], ["y"])], [("x", [1, "seq", 16])])
    with pytest.raises(ConfigError, match="symbolic dim 'seq' at axis 1.*dims"):
        onnx_to_trace(m)
    assert onnx_to_trace(m, dims={"seq": 5}).trace.total_flops == 5 * 16
    with pytest.raises(ConfigError, match="option batch must be a positive integer; got 0"):
        onnx_to_trace(cnn(), batch=0)


def test_onnx_branches_follow_tensor_producers():
    # Two branches off one input, concatenated, plus a residual Add; Constant is not a kernel.
    m = model([
        helper.make_node("Conv", ["x", "w1"], ["a"], kernel_shape=[1, 1]),
        helper.make_node("Conv", ["x", "w2"], ["b"], kernel_shape=[3, 3], pads=[1] * 4),
        helper.make_node("Concat", ["a", "b"], ["c"], axis=1),
        helper.make_node("Constant", [], ["shape"],
                         value=numpy_helper.from_array(np.array([1, -1], np.int64))),
        helper.make_node("Add", ["c", "x2"], ["d"]),
        helper.make_node("Reshape", ["d", "shape"], ["y"]),
    ], [("x", [1, 4, 8, 8]), ("x2", [1, 8, 8, 8])], [weight("w1", 4, 4, 1, 1),
                                                      weight("w2", 4, 4, 3, 3)])
    t = onnx_to_trace(m).trace.table
    assert list(t["op"]) == ["conv", "conv", "concat", "add", "reshape"]
    assert [tuple(d) for d in t["deps"]] == [(), (), (0, 1), (2,), (3,)]
    assert t["bytes_in"][2] == 2 * 4 * 64 * 4 and t["weight_bytes"][4] == 2 * 8


def test_onnx_transformer_ops():
    m = model([
        helper.make_node("Gemm", ["x", "wq", "bq"], ["q"], transB=1),
        helper.make_node("Transpose", ["q"], ["kt"], perm=[1, 0]),
        helper.make_node("MatMul", ["q", "kt"], ["s"]),
        helper.make_node("Softmax", ["s"], ["p"], axis=-1),
        helper.make_node("LayerNormalization", ["p", "g", "beta"], ["n"], axis=-1),
        helper.make_node("Gelu", ["n"], ["y"], domain=""),
    ], [("x", [6, 16])], [weight("wq", 32, 16), weight("bq", 32), weight("g", 6),
                          weight("beta", 6)], opset=20)
    t = onnx_to_trace(m).trace.table
    assert list(t["op"]) == ["fc", "transpose", "matmul", "softmax", "layernorm", "gelu"]
    assert list(t["flops"]) == [2 * 6 * 32 * 16, 0, 2 * 6 * 6 * 32, 5 * 36, 8 * 36, 8 * 36]
    assert (t["in_channels"][0], t["out_channels"][0], t["batch"][0]) == (16, 32, 6)


def test_onnx_conv_transpose_and_pooling_flops():
    m = model([
        helper.make_node("ConvTranspose", ["x", "w"], ["u"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("MaxPool", ["u"], ["y"], kernel_shape=[3, 3], strides=[1, 1]),
    ], [("x", [1, 4, 5, 5])], [weight("w", 4, 2, 2, 2)])
    t = onnx_to_trace(m).trace.table
    assert list(t["op"]) == ["deconv", "maxpool"]
    assert t["flops"][0] == 2 * (4 * 25) * (2 * 2 * 2)     # each input pixel meets a 2x2x2 slice
    assert t["flops"][1] == 2 * 8 * 8 * 9                    # output 10 - 3 + 1 = 8


def test_onnx_unknown_op_is_copied_with_a_warning_or_rejected_when_strict():
    m = model([helper.make_node("Relu", ["x"], ["r"]),
               helper.make_node("Resize", ["r", "", "scales"], ["y"])],
              [("x", [1, 2, 4, 4])],
              [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")])
    result = onnx_to_trace(m)
    assert list(result.trace.table["op"]) == ["relu", "copy"]
    assert result.trace.table["flops"][1] == 0
    assert any("unsupported op type 'Resize' imported as copy" in w for w in result.warnings)
    with pytest.raises(ConfigError, match="node Resize_1: unsupported ONNX op type 'Resize'"):
        onnx_to_trace(m, strict=True)


def test_onnx_precision_follows_the_weights():
    m = model([helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[1, 1])],
              [("x", [1, 4, 2, 2])], [weight("w", 4, 4, 1, 1, dtype=np.float16)])
    m.graph.input[0].type.tensor_type.elem_type = TensorProto.FLOAT16
    t = onnx_to_trace(m).trace.table
    assert t["precision"][0] == "fp16" and t["weight_bytes"][0] == 16 * 2
    assert t["bytes_in"][0] == 16 * 2


def test_onnx_quantized_conv_is_an_int8_conv():
    m = model([helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"],
                                ["y"], kernel_shape=[3, 3], pads=[1] * 4)],
              [("x", [1, 4, 6, 6])],
              [weight("w", 8, 4, 3, 3, dtype=np.int8), weight("xs", dtype=np.float32),
               weight("xz", dtype=np.uint8), weight("ws", dtype=np.float32),
               weight("wz", dtype=np.int8), weight("ys", dtype=np.float32),
               weight("yz", dtype=np.uint8)])
    m.graph.input[0].type.tensor_type.elem_type = TensorProto.UINT8
    m.graph.output[0].type.tensor_type.elem_type = TensorProto.UINT8
    row = onnx_to_trace(m).trace.table.iloc[0]
    assert (row["op"], row["precision"], row["kernel"]) == ("conv", "int8", 3)
    assert row["flops"] == 2 * (8 * 36) * (4 * 9)
    assert row["bytes_in"] == 4 * 36 and row["weight_bytes"] == 8 * 36 + 3 * 4 + 3 * 1


def test_onnx_constant_subgraphs_are_folded_not_kernels():
    # A weight stored as fp16 and cast to fp32, and a dynamic-looking reshape whose
    # target is computed from Shape: both are load-time constants.
    m = model([
        helper.make_node("Cast", ["w16"], ["w"], to=TensorProto.FLOAT),
        helper.make_node("MatMul", ["x", "w"], ["h"]),
        helper.make_node("Shape", ["h"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
        helper.make_node("Concat", ["n1", "minus1"], ["target"], axis=0),
        helper.make_node("Reshape", ["h", "target"], ["y"]),
    ], [("x", [2, 3, 4])], [weight("w16", 4, 5, dtype=np.float16),
                            numpy_helper.from_array(np.array(0, np.int64), "zero"),
                            numpy_helper.from_array(np.array([0], np.int64), "axes"),
                            numpy_helper.from_array(np.array([-1], np.int64), "minus1")])
    t = onnx_to_trace(m, precision="fp32").trace.table
    assert list(t["op"]) == ["fc", "reshape"]
    assert t["weight_bytes"][0] == 20 * 4 and t["flops"][0] == 2 * 6 * 5 * 4
    assert [tuple(d) for d in t["deps"]] == [(), (0,)]


_RESNET50 = Path(onnx.__file__).parent / "backend/test/data/light/light_resnet50.onnx"


@pytest.mark.skipif(not _RESNET50.is_file(), reason="onnx backend test models not installed")
def test_onnx_resnet50_matches_its_published_size():
    # ../shared/data/hardware-facts.md: ResNet-50 has 25.56 M parameters and
    # 4.09-4.13 G MACs (torchvision). The "light" model ships with the onnx package
    # and builds its weights with ConstantOfShape, which the importer folds.
    t = onnx_to_trace(onnx.load(str(_RESNET50))).trace.table
    macs = t.loc[t["op"].isin(["conv", "fc"]), "flops"].sum() / 2
    # torchvision counts BN scale and shift, not the running mean and variance.
    bn_channels = t.loc[t["op"] == "batchnorm", "out_channels"].sum()
    params = t["weight_bytes"].sum() / 4 - 2 * bn_channels
    assert macs == pytest.approx(4.09e9, rel=0.01)
    assert params == pytest.approx(25.56e6, rel=0.001)


def test_onnx_importer_writes_a_trace_and_reports_warnings(tmp_path):
    path = tmp_path / "cnn.onnx"
    onnx.save(cnn(), str(path))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        written = run_importer("onnx", path, tmp_path, batch=None)
    assert written == [tmp_path / "cnn.csv"]
    assert [w.category for w in caught] == [ImporterWarning]
    trace = load_trace(written[0])
    assert len(trace) == 6 and set(trace.table["model"]) == {"tiny"}
    out = run_importer("onnx", path, tmp_path / "sub" / "t.parquet", batch=3)
    assert load_trace(out[0]).table["batch"][0] == 3


def test_onnx_unreadable_file_names_the_file(tmp_path):
    path = tmp_path / "broken.onnx"
    path.write_bytes(b"not a protobuf at all \x00\xff")
    with pytest.raises(ConfigError, match=r"broken\.onnx: cannot read ONNX model"):
        run_importer("onnx", path, tmp_path / "t.csv")


# ---------------------------------------------------------------- found by the fuzzer


def test_onnx_node_with_the_wrong_inputs_is_bad_input_not_an_index_error():
    # shape inference skips such a node without a word; the importer then indexed input 1
    m = model([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("MatMul", ["r"], ["y"])],
              [("x", [2, 4])])
    with pytest.raises(ConfigError, match=r"node MatMul_1: invalid MatMul node: .*input size 1"):
        onnx_to_trace(m)
    m = model([helper.make_node("Softmax", ["x"], ["y"], axis=[0, 0])], [("x", [2, 4])])
    with pytest.raises(ConfigError, match="invalid Softmax node: Mismatched attribute type"):
        onnx_to_trace(m)


def test_onnx_input_of_size_zero_is_bad_input():
    with pytest.raises(ConfigError, match="input 'x' has size 0 at axis 1; sizes must be positive"):
        onnx_to_trace(model([helper.make_node("Relu", ["x"], ["y"])], [("x", [1, 0, 4])]))


def test_a_long_model_name_gets_a_short_unique_file_name(tmp_path):
    long, other = "x" * 300, "x" * 299 + "y"
    path = tmp_path / "ops.csv"
    path.write_text(HEADER + "".join(f"{name},CONV_2D,{feature(8, 3, 8, f=4)},1.0\n"
                                     for name in (long, other)))
    written = run_importer("mobile-ml-benchmark", path, tmp_path / "out")
    assert len(set(written)) == 2 and all(len(p.name) <= 104 for p in written)
    assert {load_trace(p).table["model"][0] for p in written} == {long, other}


def test_an_output_the_file_system_refuses_is_one_line_bad_input(tmp_path):
    path = tmp_path / "cnn.onnx"
    onnx.save(cnn(), str(path))
    out = tmp_path / ("t" * 300 + ".csv")  # longer than any file system allows (255)
    with pytest.raises(ConfigError, match="name too long") as info:
        run_importer("onnx", path, out, batch=1)
    assert "\n" not in str(info.value) and info.value.file == str(out)
