"""Importer for ONNX models: one kernel per graph node, shapes from ONNX shape inference.

Flops follow the trace convention (2 per multiply-accumulate); pooling counts
one op per window tap and reductions one per input element, as the
mobile-ml-benchmark data does. Element-wise ops count the arithmetic steps per
output element listed in :data:`PER_ELEMENT` (transcendental functions count 4).
Bytes use each tensor's own element type; inputs that are constants are
weights, the rest activations. Dependencies follow tensor producers, so the
trace is the graph's DAG.

Constants are initializers and the outputs of *folded* nodes: nodes whose
inputs are all constants (``Constant``, ``ConstantOfShape``, a ``Cast`` or
``DequantizeLinear`` of a weight, shape arithmetic) and ``Shape``/``Size`` of a
tensor whose shape inference knows. A runtime computes these once, at load
time, so they are not kernels. ``Shape``/``Size`` of a tensor of unknown shape
are dropped too; their consumers wait for what they waited for.

Nodes with an op type not in the tables become ``copy`` kernels with 0 flops and
a warning (or a ConfigError with ``strict=True``).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from simulator.errors import ConfigError
from simulator.ops import PRECISIONS
from simulator.trace import Trace, save_trace, trace_from_table

from . import ImporterWarning, importer
from .onnx_graph import Graph, attr, check_nodes, fix_input_dims, graph_facts, infer_precision

# op_type -> trace op kind; Conv, Gemm, MatMul and Gather are decided per node.
KINDS = {
    "ConvTranspose": "deconv", "MaxPool": "maxpool", "AveragePool": "avgpool",
    "GlobalAveragePool": "global_pool", "GlobalMaxPool": "global_pool",
    "ReduceMean": "global_pool", "ReduceSum": "global_pool", "ReduceMax": "reduce_max",
    "BatchNormalization": "batchnorm", "LayerNormalization": "layernorm", "LRN": "lrn",
    "Relu": "relu", "Clip": "relu", "LeakyRelu": "relu", "PRelu": "relu",
    "Sigmoid": "sigmoid", "HardSigmoid": "sigmoid", "Tanh": "tanh",
    "Gelu": "gelu", "Erf": "gelu", "HardSwish": "gelu",
    "Add": "add", "Sub": "add", "Sum": "add", "Mul": "mul", "Div": "mul",
    "Sqrt": "sqrt", "Softmax": "softmax", "LogSoftmax": "softmax",
    "Concat": "concat", "Transpose": "transpose",
    "Reshape": "reshape", "Flatten": "reshape", "Squeeze": "reshape", "Unsqueeze": "reshape",
    "Pad": "pad", "Slice": "slice", "Split": "slice",
    "Identity": "copy", "Dropout": "copy", "Cast": "copy", "Expand": "copy",
    "QuantizeLinear": "quantize", "DequantizeLinear": "dequantize",
    "LSTM": "lstm",
}
# Op types decided per node, with the position of their weight/second operand.
_CONV_LIKE = {"Conv": 1, "ConvInteger": 1, "QLinearConv": 3}
_MATMUL_LIKE = {"Gemm": 1, "MatMul": 1, "MatMulInteger": 1, "QLinearMatMul": 3}
_DECIDED_PER_NODE = (*_CONV_LIKE, *_MATMUL_LIKE, "Gather")
# Arithmetic steps per output element for element-wise ops (reasons in docs/importers.md).
PER_ELEMENT = {
    "Relu": 1, "Clip": 1, "LeakyRelu": 2, "PRelu": 2, "Add": 1, "Sub": 1, "Mul": 1,
    "Div": 1, "Sqrt": 1, "BatchNormalization": 2, "HardSigmoid": 2, "HardSwish": 3,
    "Sigmoid": 4, "Tanh": 4, "Erf": 4, "Gelu": 8, "Softmax": 5, "LogSoftmax": 5,
    "LayerNormalization": 8, "QuantizeLinear": 2, "DequantizeLinear": 2,
}
_SHAPE_OPS = ("Shape", "Size")


@dataclass
class OnnxImport:
    """The result of importing one ONNX model.

    Attributes:
        trace: the kernel DAG.
        warnings: one line per approximation made (unknown op types, unknown shapes).
    """

    trace: Trace
    warnings: list[str] = field(default_factory=list)


def _folded(node, graph: Graph) -> bool:
    """Whether a node only computes constants (see the module docstring)."""
    if node.op_type in _SHAPE_OPS:
        return bool(node.input) and node.input[0] in graph.shapes
    return all(name in graph.constants for name in node.input if name)


def _kind(node, graph: Graph) -> str | None:
    op = node.op_type
    if op in _CONV_LIKE:
        x = graph.shapes.get(node.input[0], ())
        group = attr(node, "group", 1)
        # Depthwise: one group per input channel (the depth multiplier may be > 1).
        return "dwconv" if group > 1 and len(x) > 1 and group == x[1] else "conv"
    if op in _MATMUL_LIKE:
        # A product with a weight matrix is a layer; two activations (attention) a matmul.
        return "fc" if node.input[_MATMUL_LIKE[op]] in graph.constants else "matmul"
    if op == "Gather":
        return "embedding" if node.input[0] in graph.constants else "slice"
    return KINDS.get(op)


def _flops(node, graph: Graph) -> int | None:
    """Operations of one node from its tensor shapes (None if a shape is unknown)."""
    op, shapes = node.op_type, graph.shapes
    out = graph.numel(node.output[0]) if node.output else None
    if op in _CONV_LIKE or op == "ConvTranspose":
        weight = shapes.get(node.input[_CONV_LIKE.get(op, 1)])
        # Each output (Conv) or input (ConvTranspose) element meets one filter slice.
        count = out if op in _CONV_LIKE else graph.numel(node.input[0])
        return None if weight is None or count is None else 2 * count * math.prod(weight[1:])
    if op in _MATMUL_LIKE:
        a = shapes.get(node.input[0])
        if a is None or out is None:
            return None
        k = a[0] if op == "Gemm" and attr(node, "transA", 0) else a[-1]
        return 2 * out * k
    if op in ("MaxPool", "AveragePool"):
        return None if out is None else out * math.prod(attr(node, "kernel_shape", [1]))
    if op in ("GlobalAveragePool", "GlobalMaxPool", "ReduceMean", "ReduceSum", "ReduceMax"):
        return graph.numel(node.input[0])
    if op == "LRN":
        return None if out is None else out * int(attr(node, "size", 1))
    if op == "LSTM":
        x, w = shapes.get(node.input[0]), shapes.get(node.input[1])
        if x is None or w is None:
            return None
        seq, batch = (x[0], x[1]) if not attr(node, "layout", 0) else (x[1], x[0])
        directions, gates, inputs = w
        # Four gate products per step: (input + hidden) x 4H, 2 ops per MAC.
        return 2 * seq * batch * directions * gates * (inputs + gates // 4)
    if op in PER_ELEMENT:
        return None if out is None else PER_ELEMENT[op] * out
    return 0


def _shape_columns(node, kind: str, graph: Graph) -> dict[str, int]:
    """Batch/channel/spatial columns for NCHW (rank 4) and [N, C] (rank 2) tensors."""
    x = graph.shapes.get(node.input[0], ()) if node.input else ()
    y = graph.shapes.get(node.output[0], ()) if node.output else ()
    columns = {"batch": y[0] if y else 0, "in_channels": 0, "out_channels": 0,
               "in_h": 0, "in_w": 0, "out_h": 0, "out_w": 0,
               "kernel": 0, "stride": 0, "groups": 0}
    if len(x) in (2, 4):
        columns.update(in_channels=x[1], in_h=x[2] if len(x) == 4 else 1,
                       in_w=x[3] if len(x) == 4 else 1)
    if len(y) in (2, 4):
        columns.update(out_channels=y[1], out_h=y[2] if len(y) == 4 else 1,
                       out_w=y[3] if len(y) == 4 else 1)
    if kind in ("fc", "matmul") and x and y:
        columns.update(batch=math.prod(y[:-1]), in_channels=x[-1], out_channels=y[-1])
    kernel = attr(node, "kernel_shape")
    if kernel is None and kind in ("conv", "dwconv", "deconv"):
        kernel = graph.shapes.get(node.input[_CONV_LIKE.get(node.op_type, 1)], ())[2:]
    if kernel:
        columns.update(kernel=int(kernel[0]), stride=int((attr(node, "strides") or [1])[0]))
    if kind in ("conv", "dwconv", "deconv"):
        columns["groups"] = int(attr(node, "group", 1))
    return columns


def onnx_to_trace(model, *, batch: int | None = None, dims: dict[str, int] | None = None,
                  precision: str | None = None, strict: bool = False,
                  source: str = "<memory>") -> OnnxImport:
    """Turn an in-memory ``onnx.ModelProto`` into a trace.

    Args:
        model: the ONNX model (not modified).
        batch: size of a dynamic (symbolic) axis-0 dim of graph inputs; default 1.
        dims: sizes of other symbolic input dims, by name (``{"seq": 128}``).
        precision: ``fp32`` | ``fp16`` | ``int8`` for the precision column and for
            tensors of unknown type; default: the type of most weight bytes.
        strict: raise ConfigError on op types this importer does not know
            instead of importing them as ``copy``.
        source: recorded as the trace's source.

    Raises:
        ConfigError: invalid model, unknown symbolic dims, or (strict) op types.
    """
    import onnx

    if precision is not None and precision not in PRECISIONS:
        raise ConfigError(f"precision must be one of {', '.join(PRECISIONS)}; "
                          f"got {precision!r}")
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    notes = fix_input_dims(copy, batch, dims or {})
    check_nodes(copy)
    try:
        inferred = onnx.shape_inference.infer_shapes(copy, data_prop=True)
    except Exception as exc:  # onnx raises InferenceError, ValidationError, RuntimeError
        raise ConfigError(f"ONNX shape inference failed: {exc}") from None
    precision = precision or infer_precision(inferred)
    graph = graph_facts(inferred, precision)
    used = {n for node in inferred.graph.node for n in node.input}
    used.update(value.name for value in inferred.graph.output)
    producers: dict[str, tuple[int, ...]] = {}
    rows, unknown_ops, unknown_shapes = [], {}, []
    for index, node in enumerate(inferred.graph.node):
        waits = tuple(sorted({d for name in node.input if name for d in producers.get(name, ())}))
        if _folded(node, graph):
            graph.constants.update(node.output)
            continue
        if node.op_type in _SHAPE_OPS:
            for name in node.output:
                producers[name] = waits
            continue
        name = node.name or f"{node.op_type}_{index}"
        kind = _kind(node, graph)
        if kind is None:
            if strict:
                raise ConfigError(f"unsupported ONNX op type {node.op_type!r} (strict=True); "
                                  f"supported: {', '.join(sorted([*KINDS, *_DECIDED_PER_NODE]))}",
                                  path=f"node {name}")
            unknown_ops[node.op_type] = unknown_ops.get(node.op_type, 0) + 1
            kind = "copy"
        activations = [n for n in node.input if n and n not in graph.constants]
        weights = [n for n in node.input if n and n in graph.constants]
        sizes = {n: graph.nbytes(n) for n in [*node.input, *node.output] if n}
        # Unused outputs (Dropout's mask) often have no shape; they do not matter.
        unknown_shapes += [n for n, size in sizes.items() if size is None and n in used]
        flops = _flops(node, graph) if kind != "copy" else 0
        kernel_id = len(rows)
        rows.append({
            "id": kernel_id, "name": name, "op": kind, "pass": "fwd", "precision": precision,
            "flops": flops or 0,
            "bytes_in": sum(sizes[n] or 0 for n in activations),
            "bytes_out": sum(sizes[n] or 0 for n in node.output if n),
            "weight_bytes": sum(sizes[n] or 0 for n in weights),
            "deps": " ".join(map(str, waits)),
            **_shape_columns(node, kind, graph),
            "layer": node.name or name, "model": inferred.graph.name or "onnx",
        })
        for output in node.output:
            producers[output] = (kernel_id,)
    if not rows:
        raise ConfigError("the ONNX graph has no computing nodes")
    for op_type, count in sorted(unknown_ops.items()):
        notes.append(f"{count} node(s) of unsupported op type {op_type!r} imported as copy "
                     "(0 flops)")
    if unknown_shapes:
        unique = sorted(set(unknown_shapes))
        notes.append(f"{len(unique)} tensor(s) without an inferred shape count as 0 bytes/flops "
                     f"(e.g. {', '.join(map(repr, unique[:3]))})")
    return OnnxImport(trace_from_table(pd.DataFrame(rows), source=source), notes)


def import_onnx(model_path: str | Path, **options) -> OnnxImport:
    """Load an ``.onnx`` file (external data next to it is loaded too) and import it.

    Args:
        model_path: the model file.
        **options: as for :func:`onnx_to_trace` (batch, dims, precision, strict).
    """
    import onnx

    path = Path(model_path)
    try:
        model = onnx.load(str(path))
    except FileNotFoundError:
        raise ConfigError("ONNX model not found", file=str(path)) from None
    except Exception as exc:  # protobuf DecodeError and friends
        raise ConfigError(f"cannot read ONNX model: {exc}", file=str(path)) from None
    if not model.graph.name:
        model.graph.name = path.stem
    try:
        return onnx_to_trace(model, source=str(path), **options)
    except ConfigError as err:
        raise err.within(file=str(path)) from None


@importer("onnx", "ONNX model -> one trace (shapes by ONNX shape inference)")
def onnx_model(input_path: Path, output_path: Path, *, batch: int | None = None,
               dims: dict[str, int] | None = None, precision: str | None = None,
               strict: bool = False) -> list[Path]:
    """Registered importer: writes one trace (CSV or Parquet by extension; into
    ``<dir>/<model stem>.csv`` when ``output_path`` is an existing directory).

    Approximations are reported as :class:`ImporterWarning` warnings.
    """
    result = import_onnx(input_path, batch=batch, dims=dims, precision=precision,
                         strict=strict)
    for note in result.warnings:
        warnings.warn(f"{input_path}: {note}", ImporterWarning, stacklevel=2)
    output_path = Path(output_path)
    if output_path.is_dir():
        output_path = output_path / f"{Path(input_path).stem}.csv"
    save_trace(result.trace, output_path)
    return [output_path]
