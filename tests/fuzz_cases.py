"""Fuzz cases over the inputs a user hands socsim: seeded mutations, one per case.

Shared by ``tests/test_fuzz.py`` (which asserts every case ends cleanly) and
``benchmarks/fuzz_report.py`` (which counts how the cases end). A case is a
kind and a seed: :func:`make_case` writes one mutated file into a folder and
returns the action that loads it the way ``socsim`` does, and what was mutated.

Kinds (the file a user edits or brings):

- ``soc``: a shipped SoC file, loaded by :func:`simulator.load_soc`;
- ``experiment``: a shipped experiment, loaded, expanded, pre-flighted and its
  first run simulated briefly;
- ``trace``: a generated kernel trace (CSV), loaded and run briefly;
- ``framework``: a shipped training-framework file, applied to a trace;
- ``onnx``: an ONNX model (small built ones and the ``light_*`` models the onnx
  package ships) with its protobuf mutated (a dim, an attribute, an op type, an
  input, an initializer, a node removed, the bytes cut or garbled), imported
  with ``socsim import onnx``'s importer, the trace loaded and run briefly;
- ``oplist``: a mobile-ml-benchmark operator list (CSV with Python-dict feature
  cells) with a cell, a feature, a column or the bytes mutated, imported with
  ``socsim import mobile-ml-benchmark``'s importer and the first trace run.

An action returns the run's metrics (``None`` when nothing runs: SoC and
framework files) or raises. How it should end: a one-line
:class:`~simulator.errors.ConfigError`, an :class:`~simulator.errors.OutOfMemory`
(a result) or a sane run (:func:`insane`).
"""

from __future__ import annotations

import copy
import math
import random
from collections.abc import Callable
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("soc", "experiment", "trace", "framework", "onnx", "oplist")
SOCS = sorted((ROOT / "socs").glob("*.yaml"))
# experiments cheap enough to plan and run briefly many times (none refers to a file
# beside it, so a mutated copy can live in a temporary folder)
EXPERIMENTS = [ROOT / "experiments" / name for name in (
    "quickstart.yaml", "sweep-example.yaml", "cappuccino/squeezenet-energy.yaml",
    "xenos/mobilenet-memory.yaml", "flexdnn/early-exit.yaml")]
FRAMEWORKS = [ROOT / "workloads" / "frameworks" / name for name in ("mnn.yaml", "tflite.yaml")]
RUN_LIMIT = "0.05 s"  # simulated time of each brief run
REPLACEMENTS = [None, -1, 0, 1e308, float("inf"), float("nan"), "", "x", "-5 GHz",
                "1 GHz GHz", "1e400 W", [], [1, 2], {}, {"a": 1}, True, 2**70, "0 K",
                "-300 C"]
# replacements no physical quantity, count or name can take: a case that puts one in
# and still runs is listed by the report for a reader to judge (some keys take them:
# a seed of 0, an empty option mapping)
SUSPICIOUS = ("-1", "1e+308", "inf", "nan", "'-5 GHz'", "'1e400 W'", "1180591620717411303424",
              "'0 K'", "'-300 C'", "'-3'", "'1e400'", "'999999999'", "'1e30'", "-3",
              "1099511627776", "2147483648", "0")


# ------------------------------------------------------------------------ YAML files

def _paths(node, prefix=()):
    """Every (path, value) in a YAML tree."""
    yield prefix, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, (*prefix, i))


def _node(tree, path):
    for part in path:
        tree = tree[part]
    return tree


def mutate_yaml(text: str, rng: random.Random) -> tuple[bytes, str]:
    """One random mutation of a YAML document; returns the bytes and what was done."""
    kind = rng.choice(["replace", "replace", "replace", "delete", "add", "cut", "bytes"])
    if kind in ("cut", "bytes"):
        return _cut_or_garble(text.encode(), kind, rng)
    tree = yaml.safe_load(text)
    path = rng.choice([p for p, _ in _paths(tree) if p])
    where = ".".join(map(str, path))
    if kind == "delete":
        del _node(tree, path[:-1])[path[-1]]
        what = f"delete {where}"
    elif kind == "add":
        node = _node(tree, path[:-1])
        if isinstance(node, dict):
            node["surprise_key"] = 1
        else:
            node.append(copy.deepcopy(node[0]) if node else 1)
        what = f"add under {'.'.join(map(str, path[:-1])) or '<root>'}"
    else:
        value = rng.choice(REPLACEMENTS)
        _node(tree, path[:-1])[path[-1]] = value
        what = f"{where} = {value!r}"
    return yaml.safe_dump(tree, sort_keys=False).encode(), what


def _cut_or_garble(data: bytes, kind: str, rng: random.Random) -> tuple[bytes, str]:
    at = rng.randrange(len(data))
    if kind == "cut":
        return data[:at], f"cut at {at}"
    return data[:at] + b"\xff\xfe\x00" + data[at:], f"bytes at {at}"


# ------------------------------------------------------------------------ CSV traces

CELL_VALUES = ["", "x", "-1", "nan", "inf", "1e400", "0", "3.5", "conv", "fwd", "int4",
               "1;2", "-3", "999999999", "1e30"]


def lenet_trace_csv(folder: Path) -> str:
    """A generated LeNet-5 training trace (batch 2), as CSV text."""
    from simulator.trace import save_trace
    from workloads.generate import generate_trace

    path = folder / "lenet.csv"
    save_trace(generate_trace("lenet5", "training", batch=2), path)
    return path.read_text(encoding="utf-8")


def mutate_csv(text: str, rng: random.Random) -> tuple[bytes, str]:
    """One random mutation of a CSV trace: a cell, a column, a row, or the bytes."""
    kind = rng.choice(["cell", "cell", "cell", "column", "row", "cut", "bytes"])
    if kind in ("cut", "bytes"):
        return _cut_or_garble(text.encode(), kind, rng)
    lines = text.splitlines()
    header = lines[0].split(",")
    if kind == "column":
        drop = rng.randrange(len(header))
        rows = [",".join(c for i, c in enumerate(line.split(",")) if i != drop)
                for line in lines]
        return "\n".join(rows).encode(), f"drop column {header[drop]}"
    at = rng.randrange(1, len(lines))
    if kind == "row":
        return "\n".join(lines[:at] + lines[at + 1:]).encode(), f"drop row {at}"
    cells = lines[at].split(",")
    column = rng.randrange(len(cells))
    cells[column] = rng.choice(CELL_VALUES)
    lines[at] = ",".join(cells)
    return "\n".join(lines).encode(), f"row {at} {header[column]} = {cells[column]!r}"


# ------------------------------------------------------------------------ ONNX models

def _onnx_seeds():
    """Small models built here (a CNN, a branchy block, a transformer layer) and the
    ``light_*`` CNNs the onnx package ships (ONNX model zoo graphs, weights built by
    ConstantOfShape), the small ones only so a case stays quick."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    def weight(name, *shape):
        return numpy_helper.from_array(np.zeros(shape, np.float32), name)

    def model(name, nodes, inputs, initializers, opset=17):
        graph = helper.make_graph(
            nodes, name, [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
                          for n, s in inputs],
            [helper.make_tensor_value_info(nodes[-1].output[0], TensorProto.FLOAT, None)],
            initializers)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])

    make = helper.make_node
    seeds = {
        "cnn": model("cnn", [
            make("Conv", ["x", "w", "b"], ["c1"], kernel_shape=[3, 3], pads=[1] * 4),
            make("Relu", ["c1"], ["r1"]),
            make("Conv", ["r1", "dw"], ["c2"], kernel_shape=[3, 3], pads=[1] * 4, group=8,
                 strides=[2, 2]),
            make("MaxPool", ["c2"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
            make("GlobalAveragePool", ["p"], ["g"]),
            make("Flatten", ["g"], ["f"]),
            make("MatMul", ["f", "fc"], ["y"])],
            [("x", ["N", 3, 32, 32])],
            [weight("w", 8, 3, 3, 3), weight("b", 8), weight("dw", 8, 1, 3, 3),
             weight("fc", 8, 10)]),
        "branches": model("branches", [
            make("Conv", ["x", "w1"], ["a"], kernel_shape=[1, 1]),
            make("Conv", ["x", "w2"], ["b"], kernel_shape=[3, 3], pads=[1] * 4),
            make("Concat", ["a", "b"], ["c"], axis=1),
            make("Constant", [], ["shape"],
                 value=numpy_helper.from_array(np.array([1, -1], np.int64))),
            make("Add", ["c", "x2"], ["d"]),
            make("Reshape", ["d", "shape"], ["y"])],
            [("x", [1, 4, 8, 8]), ("x2", [1, 8, 8, 8])],
            [weight("w1", 4, 4, 1, 1), weight("w2", 4, 4, 3, 3)]),
        "transformer": model("transformer", [
            make("Gemm", ["x", "wq", "bq"], ["q"], transB=1),
            make("Transpose", ["q"], ["kt"], perm=[1, 0]),
            make("MatMul", ["q", "kt"], ["s"]),
            make("Softmax", ["s"], ["p"], axis=-1),
            make("LayerNormalization", ["p", "g", "beta"], ["y"], axis=-1)],
            [("x", [6, 16])],
            [weight("wq", 32, 16), weight("bq", 32), weight("g", 6), weight("beta", 6)],
            opset=20),
    }
    light = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
    for name in ("light_squeezenet", "light_shufflenet"):
        if (light / f"{name}.onnx").is_file():
            seeds[name] = onnx.load(str(light / f"{name}.onnx"))
    return seeds


_ONNX_SEEDS: dict | None = None
ONNX_OPS = ["Conv", "Relu", "MatMul", "Gemm", "Concat", "Add", "Reshape", "MaxPool",
            "Softmax", "Flatten", "ConvTranspose", "LSTM", "Resize", "Bogus", ""]
ATTR_VALUES = [0, -3, 2**31, [], [0, 0], [-1, -1], [2**40, 2**40], [1]]
DIM_VALUES = [0, -1, 2**40, "seq", 7]


def mutate_onnx(rng: random.Random) -> tuple[bytes, str, str]:
    """One random mutation of a seed ONNX model; returns bytes, the seed's name and what."""
    from onnx import TensorProto

    global _ONNX_SEEDS
    if _ONNX_SEEDS is None:
        _ONNX_SEEDS = {name: m.SerializeToString() for name, m in _onnx_seeds().items()}
    from onnx import ModelProto

    name = rng.choice(sorted(_ONNX_SEEDS))
    model = ModelProto.FromString(_ONNX_SEEDS[name])
    graph = model.graph
    nodes = [n for n in graph.node if n.op_type != "Constant"] or list(graph.node)
    node = rng.choice(nodes)
    kind = rng.choice(["dim", "attr", "attr", "op_type", "input", "initializer", "delete",
                       "cut", "bytes"])
    if kind in ("cut", "bytes"):
        data, what = _cut_or_garble(model.SerializeToString(), kind, rng)
        return data, name, what
    if kind == "dim":
        value = rng.choice(graph.input)
        dims = value.type.tensor_type.shape.dim
        if not dims:
            return model.SerializeToString(), name, f"{value.name} (no dims)"
        dim = dims[rng.randrange(len(dims))]
        new = rng.choice(DIM_VALUES)
        if isinstance(new, str):
            dim.dim_param = new
        else:
            dim.dim_value = new
        what = f"input {value.name} dim = {new!r}"
    elif kind == "attr" and node.attribute:
        attribute = rng.choice(node.attribute)
        new = rng.choice(ATTR_VALUES)
        attribute.ClearField("i")
        del attribute.ints[:]
        if isinstance(new, list):
            attribute.type = attribute.INTS
            attribute.ints.extend(new)
        else:
            attribute.type = attribute.INT
            attribute.i = new
        what = f"{node.op_type}.{attribute.name} = {new!r}"
    elif kind == "op_type":
        new = rng.choice(ONNX_OPS)
        what = f"{node.op_type} -> {new!r}"
        node.op_type = new
    elif kind == "input" and node.input:
        at = rng.randrange(len(node.input))
        new = rng.choice(["missing_tensor", "", node.output[0]])  # the last: a cycle
        what = f"{node.op_type} input {at} = {new!r}"
        node.input[at] = new
    elif kind == "initializer" and graph.initializer:
        tensor = rng.choice(graph.initializer)
        change = rng.choice(["drop", "dims", "type"])
        if change == "drop":
            graph.initializer.remove(tensor)
        elif change == "dims":
            tensor.dims[0] = rng.choice([0, -4, 2**40])
        else:
            tensor.data_type = rng.choice([TensorProto.STRING, TensorProto.INT8, 99])
        what = f"initializer {tensor.name}: {change}"
    else:
        graph.node.remove(node)
        what = f"delete node {node.op_type} ({node.name or node.output[0]})"
    return model.SerializeToString(), name, what


# ------------------------------------------------------------------ mobile-ml-benchmark

def _feature(i, c, o, s="1", k="1", f="-", g="1", flops="-") -> dict:
    return {"Input_shape": str(i), "Input_channel": c, "Output_shape": str(o), "Stride": str(s),
            "Kernel": str(k), "Filter": str(f), "Group": str(g), "FLOPS": str(flops)}


# Every operation the format has: a stem, a SqueezeNet fire module (branches joined by
# a concat), depthwise and grouped convs, pools and the classifier; two models.
OPLIST_ROWS = [
    ("m1", "CONV_2D", _feature(34, 3, 16, s=2, k=3, f=16)),
    ("m1", "MAX_POOL_2D", _feature(16, 16, 8, s=2, k=2)),
    ("m1", "CONV_2D", _feature(8, 16, 8, f=8)),
    ("m1", "CONV_2D", _feature(8, 8, 8, f=16)),
    ("m1", "CONV_2D", _feature(10, 8, 8, k=3, f=16)),
    ("m1", "CONCATENATION", _feature(8, 16, 8, s="-", k=2, f=32, g="-")),
    ("m1", "DEPTHWISE_CONV_2D", _feature(10, 32, 8, k=3, f=1)),
    ("m1", "CONV_2D_GROUP", _feature(8, 32, 8, f=32, g=4)),
    ("m1", "AVERAGE_POOL_2D", _feature(8, 32, 4, s=2, k=2)),
    ("m1", "MEAN", _feature(4, 32, 32, k=0)),
    ("m1", "FULLY_CONNECTED", _feature("-", 32, "-", s="-", k="-", f=10, g="-", flops=640)),
    ("m2", "CONV_2D", _feature(18, 3, 8, s=2, k=3, f=8)),
    ("m2", "FULLY_CONNECTED", _feature("-", 512, "-", s="-", k="-", f=10, g="-")),
]
OPLIST_HEADER = "model,operation,feature,pixel4|gpu|float"
FEATURE_VALUES = ["-", "0", "-3", "1e9", "abc", "999999999999", "", "2.5", None, [1, 2]]


def _oplist_line(model: str, operation: str, feature) -> str:
    text = feature if isinstance(feature, str) else repr(feature)
    return f'{model},{operation},"{text}",10.0'


def mutate_oplist(rng: random.Random) -> tuple[bytes, str]:
    """One random mutation of :data:`OPLIST_ROWS` written as an op list."""
    rows = [(m, op, dict(f)) for m, op, f in OPLIST_ROWS]
    kind = rng.choice(["feature", "feature", "feature", "drop_key", "operation", "model",
                       "not_a_dict", "column", "row", "cut", "bytes"])
    at = rng.randrange(len(rows))
    model, operation, feature = rows[at]
    what = f"row {at + 1} ({operation}) "
    if kind == "feature":
        key = rng.choice(sorted(feature))
        feature[key] = rng.choice(FEATURE_VALUES)
        what += f"{key} = {feature[key]!r}"
    elif kind == "drop_key":
        key = rng.choice(sorted(feature))
        del feature[key]
        what += f"no {key}"
    elif kind == "operation":
        operation = rng.choice(["CONV_3D", "", "conv_2d", "ADD", "MEAN", "CONCATENATION"])
        what += f"operation = {operation!r}"
    elif kind == "model":
        model = rng.choice(["", "m2", "../escape", "a/b", "x" * 300])
        what += f"model = {model!r}"
    elif kind == "not_a_dict":
        feature = rng.choice(["{", "[1, 2]", "__import__('os')", "{'Input_shape': }", "1"])
        what += f"feature = {feature!r}"
    rows[at] = (model, operation, feature)
    lines = [OPLIST_HEADER, *(_oplist_line(*row) for row in rows)]
    text = "\n".join(lines) + "\n"
    if kind in ("cut", "bytes"):
        return _cut_or_garble(text.encode(), kind, rng)
    if kind == "row":
        del lines[at + 1]
        return ("\n".join(lines) + "\n").encode(), f"drop row {at + 1}"
    if kind == "column":
        drop = rng.choice(["model", "operation", "feature"])
        keep = [c for c in OPLIST_HEADER.split(",") if c != drop]
        table = [",".join(keep)] + [",".join(_row_cells(row, drop)) for row in rows]
        return ("\n".join(table) + "\n").encode(), f"drop column {drop}"
    return text.encode(), what


def _row_cells(row, drop: str) -> list[str]:
    model, operation, feature = row
    cells = {"model": model, "operation": operation, "feature": f'"{feature!r}"'}
    return [cells[c] for c in ("model", "operation", "feature") if c != drop] + ["10.0"]


# ------------------------------------------------------------------------------ cases

def brief_run(trace, trace_path: Path) -> dict:
    """Run ``trace`` briefly on one Snapdragon 865 CPU cluster; returns the metrics."""
    from simulator.engine.simulation import simulate
    from simulator.spec.experiment import ExperimentSpec

    spec = ExperimentSpec.model_validate({
        "name": "fuzz", "soc": "snapdragon865", "workload": {"trace": str(trace_path)},
        "policy": {"name": "single"}, "time_limit": RUN_LIMIT})
    return simulate(spec, traces={0: trace}).metrics


def _soc(path: Path) -> None:
    from simulator import load_soc

    load_soc(str(path))


def make_case(kind: str, seed: int, folder: Path) -> tuple[Callable[[], dict | None], str]:
    """The action of fuzz case ``(kind, seed)`` (its files written into ``folder``)
    and a description of the mutation, for messages."""
    rng = random.Random(f"{kind}-{seed}")
    yaml_sources = {"soc": (SOCS, _soc), "experiment": (EXPERIMENTS, _experiment),
                    "framework": (FRAMEWORKS, _framework)}
    if kind in yaml_sources:
        sources, load = yaml_sources[kind]
        source = rng.choice(sources)
        data, what = mutate_yaml(source.read_text(encoding="utf-8"), rng)
        path = folder / source.name
        path.write_bytes(data)
        return lambda: load(path), f"{source.relative_to(ROOT)}: {what}"
    if kind == "trace":
        data, what = mutate_csv(lenet_trace_csv(folder), rng)
        path = folder / "mutated.csv"
        path.write_bytes(data)
        return lambda: _trace(path), f"lenet trace: {what}"
    if kind == "onnx":
        data, name, what = mutate_onnx(rng)
        path = folder / f"{name}.onnx"
        path.write_bytes(data)
        return lambda: _onnx(path, folder), f"{name}.onnx: {what}"
    if kind == "oplist":
        data, what = mutate_oplist(rng)
        path = folder / "ops.csv"
        path.write_bytes(data)
        return lambda: _oplist(path, folder), f"op list: {what}"
    raise ValueError(f"unknown fuzz kind {kind!r}")


def _experiment(path: Path) -> dict:
    from simulator.engine.simulation import simulate
    from simulator.experiment import (
        check_experiment,
        check_plots,
        check_runs,
        expand,
        load_experiment,
    )

    raw, base = load_experiment(path)
    runs = expand(raw, file=str(path))
    check_plots(raw, runs, str(path))  # the pre-flight of socsim run (simulator.runner)
    check_runs(runs, base, str(path))
    config = dict(runs[0].config)
    config["time_limit"] = RUN_LIMIT
    return simulate(check_experiment(config, str(path)), seed=runs[0].seed, base=base).metrics


def _trace(path: Path) -> dict:
    from simulator.trace import load_trace

    return brief_run(load_trace(path), path)


def _framework(path: Path) -> None:
    from workloads.frameworks import apply_framework, load_framework
    from workloads.generate import generate_trace

    apply_framework(generate_trace("lenet_mnn", "training", batch=2), load_framework(path))


def _onnx(path: Path, folder: Path) -> dict:
    import warnings

    from simulator.importers import run_importer
    from simulator.trace import load_trace

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # approximations are reported as warnings
        [written] = run_importer("onnx", path, folder / "imported.csv")
    return brief_run(load_trace(written), written)


def _oplist(path: Path, folder: Path) -> dict:
    from simulator.importers import run_importer
    from simulator.trace import load_trace

    out = folder / "imported"
    written = run_importer("mobile-ml-benchmark", path, out)
    return brief_run(load_trace(written[0]), written[0])


def insane(metrics: dict | None) -> str | None:
    """What is physically impossible in a run's metrics (None: nothing)."""
    if metrics is None:
        return None
    for name, value in metrics.items():
        if not isinstance(value, (int, float)) or math.isinf(value):
            return f"{name} = {value!r}"
    for name in ("makespan_s", "energy_j", "latency_s", "avg_power_w"):
        if metrics.get(name, 0.0) < 0:
            return f"{name} = {metrics[name]!r} < 0"
    if not metrics["peak_temp_c"] > -273.15:
        return f"peak_temp_c = {metrics['peak_temp_c']!r} at or below absolute zero"
    return None


def suspicious(what: str) -> bool:
    """Whether a mutation put in a value no quantity, count or name can take."""
    return any(what.endswith(f"= {value}") for value in SUSPICIOUS)
