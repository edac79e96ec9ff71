"""Importer for the operator lists of the mobile-ml-benchmark (Li et al., EdgeSys 2024).

The input is a CSV with columns ``model, operation, feature`` (more columns,
such as measured latencies, are ignored). ``feature`` is a Python-dict string::

    {'Input_shape': '112', 'Input_channel': 32, 'Output_shape': '112', 'Stride': '1',
     'Kernel': '3', 'Filter': '96', 'Group': '1', 'FLOPS': '693633024'}

Rows are TFLite operators in execution order, one model after another. Sizes
are square spatial sizes; ``Input_shape`` already includes any explicit
padding (a 3x3 stride-1 conv on 112x112 reads 114). A convolution with ``Group`` > 1
(``CONV_2D_GROUP``) becomes a ``group_conv`` kernel. Element-wise operators
(ADD, MUL, activations) are fused or absent. There is no explicit graph, so
dependencies are inferred (see :func:`infer_deps` and ``docs/importers.md``).

Each model becomes one trace, ``<output_dir>/<model>.csv``.
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from simulator.errors import ConfigError
from simulator.ops import PRECISIONS
from simulator.trace import BYTES_PER_ELEMENT, Trace, save_trace, trace_from_table

from . import importer

REQUIRED_COLUMNS = ("model", "operation", "feature")
OPERATIONS = {
    "CONV_2D": "conv",
    # TFLite runs grouped convolutions with another kernel (its reference one,
    # single-threaded: tensorflow/lite/kernels/conv.cc), hence their own kind.
    "CONV_2D_GROUP": "group_conv",
    "DEPTHWISE_CONV_2D": "dwconv",
    "FULLY_CONNECTED": "fc",
    "MAX_POOL_2D": "maxpool",
    "AVERAGE_POOL_2D": "avgpool",
    "MEAN": "global_pool",
    "CONCATENATION": "concat",
}
# Feature keys each operation needs ("-" marks a field the format leaves empty).
_NEEDED = {
    "CONV_2D": ("Input_shape", "Input_channel", "Output_shape", "Stride", "Kernel", "Filter"),
    "CONV_2D_GROUP": ("Input_shape", "Input_channel", "Output_shape", "Stride", "Kernel",
                      "Filter", "Group"),
    "DEPTHWISE_CONV_2D": ("Input_shape", "Input_channel", "Output_shape", "Stride", "Kernel"),
    "FULLY_CONNECTED": ("Input_channel", "Filter"),
    "MAX_POOL_2D": ("Input_shape", "Input_channel", "Output_shape", "Stride", "Kernel"),
    "AVERAGE_POOL_2D": ("Input_shape", "Input_channel", "Output_shape", "Stride", "Kernel"),
    "MEAN": ("Input_shape", "Input_channel"),
    "CONCATENATION": ("Input_shape", "Input_channel", "Kernel", "Filter"),
}
# Concat input search: how far back to look and how many subsets to try at most.
_CONCAT_CANDIDATES = 64
_CONCAT_BUDGET = 1_000_000


@dataclass(frozen=True)
class Op:
    """One operator row, normalised to square NHWC shapes (batch 1).

    Attributes:
        row: 1-based data row in the CSV (the header is not counted).
        operation: the file's operation name (``CONV_2D``).
        kind: the trace op kind (``conv``).
        in_size, in_ch: input spatial size (padding included) and channels.
        out_size, out_ch: output spatial size and channels.
        kernel, stride, groups: window size, stride and groups (0 when not applicable).
        params: weights + biases (elements).
        flops: operations (2 per MAC; one per window tap for pooling).
        n_inputs: number of input tensors (concat only; 1 otherwise).
    """

    row: int
    operation: str
    kind: str
    in_size: int
    in_ch: int
    out_size: int
    out_ch: int
    kernel: int
    stride: int
    groups: int
    params: int
    flops: int
    n_inputs: int = 1


# Geometry (sizes, channels, kernel, stride) of 0 describes no operator and would
# give zero-work kernels or divisions by zero downstream; 2^31 is the frameworks'
# int32 limit.
MAX_FEATURE = 2**31 - 1


def _int(feature: dict, key: str, where: str, default: int | None = None,
         minimum: int = 0) -> int:
    """Feature ``key`` as an integer in ``[minimum, MAX_FEATURE]`` (``default`` if absent)."""
    value = feature.get(key, "-")
    if value in ("-", "", None):
        if default is not None:
            return default
        raise ConfigError(f"feature {key} is missing; got {feature!r}", path=where)
    try:
        number = int(str(value).strip())
    except ValueError:
        number = -1
    if not minimum <= number <= MAX_FEATURE:
        kind = "a positive" if minimum == 1 else "a non-negative"
        raise ConfigError(f"feature {key} must be {kind} integer of at most {MAX_FEATURE}; "
                          f"got {value!r}", path=where)
    return number


def parse_op(row: int, operation: str, feature: dict) -> Op:
    """Normalise one operator row to an :class:`Op`.

    Raises:
        ConfigError: unknown operation or a missing/non-integer feature.
    """
    where = f"row {row}, column feature"
    kind = OPERATIONS.get(operation)
    if kind is None:
        raise ConfigError(f"unknown operation {operation!r}; expected one of "
                          f"{', '.join(OPERATIONS)}", path=f"row {row}, column operation")
    # A concat's Kernel counts its inputs and may be 0 (read as 1, see below).
    get = {key: _int(feature, key, where,
                     minimum=0 if (operation, key) == ("CONCATENATION", "Kernel") else 1)
           for key in _NEEDED[operation]}
    flops_value = feature.get("FLOPS", "-")
    if operation == "CONCATENATION":
        # Kernel holds the number of inputs, Input_channel the first input's
        # channels and Filter the output channels; concat does no arithmetic.
        size, out_ch = get["Input_shape"], get["Filter"]
        return Op(row, operation, kind, size, out_ch, size, out_ch, 0, 0, 0, 0,
                  _int(feature, "FLOPS", where, default=0), max(1, get["Kernel"]))
    if operation == "FULLY_CONNECTED":
        c_in, c_out = get["Input_channel"], get["Filter"]
        op = Op(row, operation, kind, 1, c_in, 1, c_out, 1, 1, 1, c_in * c_out + c_out,
                2 * c_in * c_out)
    elif operation == "MEAN":
        # Global mean over the spatial axes: one add per input element.
        size, ch = get["Input_shape"], get["Input_channel"]
        op = Op(row, operation, kind, size, ch, 1, ch, size, 1, 0, 0, size * size * ch)
    else:
        size, ch, out = get["Input_shape"], get["Input_channel"], get["Output_shape"]
        k, stride = get["Kernel"], get["Stride"]
        if kind in ("maxpool", "avgpool"):
            # One compare/add per window tap, as the file counts it.
            op = Op(row, operation, kind, size, ch, out, ch, k, stride, 0, 0,
                    out * out * ch * k * k)
        elif kind == "dwconv":
            # Filter is the depth multiplier (1 in practice); bias per output channel.
            c_out = ch * _int(feature, "Filter", where, default=1, minimum=1)
            op = Op(row, operation, kind, size, ch, out, c_out, k, stride, ch,
                    k * k * c_out + c_out, 2 * out * out * c_out * k * k)
        else:
            groups = _int(feature, "Group", where, default=1)
            c_out = get["Filter"]
            if groups < 1 or ch % groups or c_out % groups:
                raise ConfigError(f"Group {groups} must divide Input_channel {ch} and "
                                  f"Filter {c_out}", path=where)
            macs = out * out * c_out * (ch // groups) * k * k
            if groups > 1:
                kind = "group_conv"
            op = Op(row, operation, kind, size, ch, out, c_out, k, stride, groups,
                    k * k * (ch // groups) * c_out + c_out, 2 * macs)
    if flops_value not in ("-", "", None):
        # The file's FLOPS equals the shape-derived count for every calibration
        # row; prefer the file's value so totals match the source exactly.
        op = replace(op, flops=_int(feature, "FLOPS", where))
    return op


def read_ops(path: str | Path) -> dict[str, list[Op]]:
    """Read an ops CSV into ``{model: [Op, ...]}`` (models and ops in file order).

    Raises:
        ConfigError: one line naming the file and the row/column at fault.
    """
    path = Path(path)
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise ConfigError("ops file not found", file=str(path)) from None
    except Exception as exc:  # pandas raises many types for unreadable files
        raise ConfigError(f"cannot read ops CSV: {exc}", file=str(path)) from None
    missing = [c for c in REQUIRED_COLUMNS if c not in table.columns]
    if missing:
        raise ConfigError(f"missing column(s) {', '.join(missing)}; an ops list needs "
                          f"{', '.join(REQUIRED_COLUMNS)}", file=str(path), path="header")
    if table.empty:
        raise ConfigError("no operator rows", file=str(path))
    models: dict[str, list[Op]] = {}
    columns = zip(table["model"], table["operation"], table["feature"], strict=True)
    for index, (model, operation, text) in enumerate(columns):
        row = index + 1
        if not model.strip():
            raise ConfigError("model name is empty", file=str(path),
                              path=f"row {row}, column model")
        try:
            feature = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            feature = None
        if not isinstance(feature, dict):
            raise ConfigError(f"feature must be a Python dict literal; got {text!r}",
                              file=str(path), path=f"row {row}, column feature")
        try:
            models.setdefault(model.strip(), []).append(
                parse_op(row, operation.strip(), feature))
        except ConfigError as err:
            raise err.within(file=str(path)) from None
    return models


def _fits(producer: Op, op: Op) -> bool:
    """Whether ``producer``'s output can be ``op``'s (non-concat) input."""
    if op.kind == "fc":
        # A flattened tensor: match by element count.
        return producer.out_size ** 2 * producer.out_ch == op.in_ch
    # Input_shape includes padding of up to kernel - 1 pixels.
    slack = max(op.kernel - 1, 0) if op.kind != "global_pool" else 0
    return (producer.out_ch == op.in_ch
            and op.in_size - slack <= producer.out_size <= op.in_size)


def _concat_inputs(ops: list[Op], i: int, stale: set[int]) -> list[int] | None:
    """Pick ``n_inputs`` earlier ops of the concat's spatial size whose channels sum to
    its output channels (depth-first, most recent first; see :func:`infer_deps`)."""
    op = ops[i]
    same = [j for j in range(i - 1, -1, -1) if ops[j].out_size == op.out_size]
    order = ([j for j in same if j not in stale]
             + [j for j in same if j in stale])[:_CONCAT_CANDIDATES]
    channels = [ops[j].out_ch for j in order]
    # suffix_max[pos]: the widest candidate from pos on, to prune hopeless branches.
    suffix_max = [max(channels[pos:]) for pos in range(len(order))] + [0]
    budget = [_CONCAT_BUDGET]

    def search(start: int, left: int, need: int) -> list[int] | None:
        if left == 0:
            return [] if need == 0 else None
        for pos in range(start, len(order)):
            budget[0] -= 1
            if budget[0] < 0 or need > left * suffix_max[pos]:
                return None
            ch = channels[pos]
            if ch <= need:
                rest = search(pos + 1, left - 1, need - ch)
                if rest is not None:
                    return [order[pos], *rest]
        return None

    return search(0, op.n_inputs, op.out_ch)


def infer_deps(ops: list[Op]) -> list[tuple[int, ...]]:
    """Infer a plausible DAG for an op list in execution order.

    Rules (deterministic; dependencies always point backwards, so it is a DAG):

    1. Producer: an op reads the output of the most recent earlier op whose
       output fits its input (same channels, spatial size equal or up to
       kernel - 1 smaller because padding is folded into ``Input_shape``; an
       FC matches by element count). No fit: the previous op (a chain).
    2. Join: the op also waits for earlier outputs that nothing consumes yet and
       that have the producer's channels and its spatial size (a residual ADD)
       or 1x1 (a squeeze-excitation MUL) -- the other operand of an element-
       wise op this format leaves out.
    3. Concat: ``Kernel`` earlier ops of the concat's spatial size whose
       channels sum to its output channels, found depth-first preferring the
       most recent ops. Outputs that are *stale* are tried last: fed to a
       same-shaped op (conv -> depthwise conv) whose own output has since been
       consumed, i.e. an intermediate the network has moved past (HarDNet
       concatenates the depthwise outputs, not the convs before them, while a
       Ghost module concatenates a conv and the depthwise conv fed by it).
       No such set: the previous op.

    Args:
        ops: one model's operators in file order.

    Returns:
        Per op, the positions (in ``ops``) it waits for.
    """
    deps: list[tuple[int, ...]] = []
    consumed: set[int] = set()
    superseded_by: dict[int, int] = {}
    for i, op in enumerate(ops):
        if i == 0:
            deps.append(())
            continue
        if op.kind == "concat":
            stale = {j for j, k in superseded_by.items() if k in consumed}
            chosen = _concat_inputs(ops, i, stale) or [i - 1]
        else:
            producer = next((j for j in range(i - 1, -1, -1) if _fits(ops[j], op)), None)
            if producer is None:
                chosen = [i - 1]
            else:
                p = ops[producer]
                chosen = [producer] + [
                    j for j in range(i - 1, -1, -1)
                    if j != producer and j not in consumed and ops[j].out_ch == p.out_ch
                    and ops[j].out_size in (p.out_size, 1)]
                if (op.out_size, op.out_ch) == (p.out_size, p.out_ch):
                    superseded_by[producer] = i
        consumed.update(chosen)
        deps.append(tuple(sorted(chosen)))
    return deps


def ops_to_trace(model: str, ops: list[Op], precision: str = "fp32",
                 source: str = "<memory>") -> Trace:
    """Build one model's trace (batch 1).

    Bytes: activations ``size^2 x channels x element size`` (inputs include the
    padding the file folds in; a concat reads all its inputs), weights
    ``params x element size`` with biases included.
    """
    size = BYTES_PER_ELEMENT[precision]
    deps = infer_deps(ops)
    rows = []
    for i, op in enumerate(ops):
        name = f"{op.operation.lower()}_{i}"
        rows.append({
            "id": i, "name": name, "op": op.kind, "pass": "fwd", "precision": precision,
            "flops": op.flops,
            "bytes_in": op.in_size ** 2 * op.in_ch * size,
            "bytes_out": op.out_size ** 2 * op.out_ch * size,
            "weight_bytes": op.params * size,
            "deps": " ".join(str(d) for d in deps[i]),
            "batch": 1, "in_channels": op.in_ch, "out_channels": op.out_ch,
            "in_h": op.in_size, "in_w": op.in_size, "out_h": op.out_size,
            "out_w": op.out_size, "kernel": op.kernel, "stride": op.stride,
            "groups": op.groups, "layer": name, "model": model,
        })
    return trace_from_table(pd.DataFrame(rows), source=source)


def _check_precision(precision: str) -> None:
    if precision not in PRECISIONS:
        raise ConfigError(f"precision must be one of {', '.join(PRECISIONS)}; "
                          f"got {precision!r}")


MAX_NAME = 100  # characters of a model name kept in its file name (file systems allow 255)


def _file_name(model: str) -> str:
    # Model names become file names: keep them portable, and short enough to be
    # one (a longer name keeps its start and a digest of the whole, so it stays unique).
    name = re.sub(r"[^A-Za-z0-9_.+-]", "_", model)
    if len(name) > MAX_NAME:
        name = f"{name[:MAX_NAME - 9]}-{hashlib.sha256(model.encode()).hexdigest()[:8]}"
    return name + ".csv"


def import_mobile_ml_benchmark(ops_csv: str | Path, output_dir: str | Path | None,
                               precision: str = "fp32") -> dict[str, Trace]:
    """Import every model of an ops CSV.

    Args:
        ops_csv: the operator list (e.g. ``pixel4_ops_calibration.csv``).
        output_dir: folder for ``<model>.csv`` traces; ``None`` writes nothing.
        precision: ``fp32`` | ``fp16`` | ``int8``; sets element sizes (4/2/1 bytes).

    Returns:
        ``{model: Trace}`` in file order.
    """
    _check_precision(precision)
    traces = {model: ops_to_trace(model, ops, precision, source=f"{ops_csv}#{model}")
              for model, ops in read_ops(ops_csv).items()}
    if output_dir is not None:
        output_dir = Path(output_dir)
        if output_dir.exists() and not output_dir.is_dir():
            raise ConfigError("output must be a directory (one trace per model)",
                              file=str(output_dir))
        for model, trace in traces.items():
            save_trace(trace, output_dir / _file_name(model))
    return traces


@importer("mobile-ml-benchmark",
          "mobile-ml-benchmark ops CSV -> one trace per model in OUTPUT_DIR")
def mobile_ml_benchmark(input_path: Path, output_path: Path, *,
                        precision: str = "fp32") -> list[Path]:
    """Registered importer: writes ``output_path/<model>.csv`` per model."""
    traces = import_mobile_ml_benchmark(input_path, output_path, precision)
    return [Path(output_path) / _file_name(model) for model in traces]
