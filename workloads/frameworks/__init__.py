"""Training frameworks as data: how MNN or TFLite really execute a training step.

The generator (:mod:`workloads.generate`) describes a step abstractly: one
kernel per layer and pass, one ``sgd_update`` per layer. A framework runs more
operators than that, every step: MNN's Express API decomposes a training-mode
batch norm into layout conversions, reductions and element-wise passes,
computes a convolution's weight gradient as an explicit im2col plus a GEMM,
runs SGD with momentum and weight decay as six element-wise operators per
parameter tensor, and so on. Each framework file (``workloads/frameworks/
<name>.yaml``, schema :mod:`workloads.frameworks.schema`) lists those rules
with the source each was read from; :func:`apply_framework` rewrites a
training trace with them::

    trace = apply_framework(generate_trace("lenet_mnn", "training", batch=8), "mnn")

Each framework operator is a kernel of its own, so it also pays the
processor's (or the kernel library's) per-kernel ``dispatch_overhead``: the
per-operator work of the framework (for MNN, building the Express graph,
shape inference, allocation), fitted per SoC where measurements exist.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pandas as pd

from simulator.errors import ConfigError
from simulator.registry import Registry
from simulator.spec.yamlio import read_yaml, validate
from simulator.trace import BYTES_PER_ELEMENT, Trace, trace_from_table

from ..named_files import named_file
from .schema import Framework, FrameworkStep

FRAMEWORK_DIR = Path(__file__).parent

# The shipped framework files, by name ("did you mean" on a typo).
FRAMEWORKS: Registry[Path] = Registry("framework")
for _path in sorted(FRAMEWORK_DIR.glob("*.yaml")):
    FRAMEWORKS.register(_path.stem)(_path)

__all__ = ["FRAMEWORKS", "Framework", "apply_framework", "load_framework"]


def load_framework(name_or_path: str | Path) -> Framework:
    """Load and validate a framework by name (``mnn``) or YAML path.

    Raises:
        ConfigError: unknown name (with suggestions), unreadable YAML or a schema
            violation, naming the file and the YAML path.
    """
    path = named_file(name_or_path, FRAMEWORKS, "framework")
    # policies apply a framework to every run of a sweep: parse each file version once
    return _load(str(path), path.stat().st_mtime_ns)


@lru_cache(maxsize=16)
def _load(path_text: str, _version: int) -> Framework:
    data = read_yaml(path_text)  # bounded: size, depth, aliases, numbers
    if not isinstance(data, dict):
        raise ConfigError("a framework file must be a mapping", file=path_text)
    return validate(Framework, data, file=path_text)


def is_training(trace: Trace) -> bool:
    """Whether a trace is a training step (it has backward or update kernels)."""
    return bool(trace.table["pass"].isin(("bwd_data", "bwd_weight", "update")).any())


def apply_framework(trace: Trace, framework: str | Path | Framework) -> Trace:
    """Rewrite a training trace into the operators ``framework`` runs.

    Each kernel a rule matches becomes the rule's steps, chained in order: the
    first inherits the kernel's dependencies, each later one waits for the one
    before, the kernel's dependants wait for the last. Other kernels are kept.
    An inference trace is returned unchanged (the rules describe training).
    """
    fw = framework if isinstance(framework, Framework) else load_framework(framework)
    if not is_training(trace) or not fw.rules:
        return trace
    records = trace.table.to_dict("records")
    layer_ops = _layer_ops(records)
    rows: list[dict] = []
    last: dict[int, int] = {}
    for record in records:
        deps = tuple(last[d] for d in record["deps"])
        rule = fw.rule_for(record["op"], record["pass"])
        layer_op = layer_ops.get(record.get("layer"), record["op"])
        if rule is None:
            rows.append({**record, "id": len(rows), "deps": deps})
            last[record["id"]] = len(rows) - 1
            continue
        sizes = _sizes(record)
        tensors = _tensors(record, layer_op) if rule.per_tensor else [sizes["weights"]]
        steps = list(rule.emit)
        if rule.with_bias and _has_bias(record, layer_op):
            steps += rule.with_bias
        for tensor in tensors:
            sizes["weights"] = tensor
            for step in steps:
                deps = (_emit(rows, step, record, sizes, deps),)
        last[record["id"]] = deps[0]
    return trace_from_table(pd.DataFrame(rows), source=f"{trace.source} + {fw.name}")


def _emit(rows: list[dict], step: FrameworkStep, record: dict, sizes: dict[str, float],
          deps: tuple[int, ...]) -> int:
    kid = len(rows)
    if step.is_main:
        rows.append({**record, "id": kid, "deps": deps})
        return kid
    element = BYTES_PER_ELEMENT[record["precision"]]
    flops = step.flops_per_element * sizes[step.flops] if step.flops else 0.0
    rows.append({**record, "id": kid, "op": step.op, "deps": deps,
                 "name": f"{record['name']}.{step.suffix or step.op}",
                 "flops": float(flops),
                 "bytes_in": float(sum(sizes[s] for s in step.reads) * element),
                 "bytes_out": float(sum(sizes[s] for s in step.writes) * element),
                 "weight_bytes": 0.0})
    return kid


def _sizes(record: dict) -> dict[str, float]:
    """The named element counts of one kernel (see ``schema.SIZES``)."""
    batch = max(1, int(record.get("batch", 1) or 1))
    c_in, c_out = int(record.get("in_channels", 0)), int(record.get("out_channels", 0))
    s_in = batch * c_in * int(record.get("in_h", 0)) * int(record.get("in_w", 0))
    s_out = batch * c_out * int(record.get("out_h", 0)) * int(record.get("out_w", 0))
    element = BYTES_PER_ELEMENT[record["precision"]]
    if s_in == 0 and s_out == 0:  # a trace without shape columns: its byte counts
        s_in = record["bytes_in"] / element
        s_out = record["bytes_out"] / element
    taps = max(1, int(record.get("kernel", 0) or 0)) ** 2
    groups = max(1, int(record.get("groups", 0) or 0))
    columns = (c_in // groups) * taps * int(record.get("out_h", 0)) * \
        int(record.get("out_w", 0)) * batch
    return {"input": float(s_in), "output": float(s_out),
            "weights": _parameters(record),
            "columns": float(columns), "input_taps": float(taps * s_in),
            "output_taps": float(taps * s_out), "channels": float(c_out)}


def _parameters(record: dict) -> float:
    """Parameters of the kernel's layer: the weights it reads, or the parameter
    gradient (``bwd_weight``) or new parameters (``update``) it writes."""
    element = BYTES_PER_ELEMENT[record["precision"]]
    if record["pass"] in ("bwd_weight", "update"):
        return record["bytes_out"] / element
    return record["weight_bytes"] / element


def _layer_ops(records: list[dict]) -> dict[str, str]:
    """The forward op of each layer (an update kernel's layer kind)."""
    return {r["layer"]: r["op"] for r in records if r["pass"] == "fwd" and r.get("layer")}


def _weight_elements(record: dict, layer_op: str | None) -> float | None:
    """Elements of the weight tensor proper of a conv/fc layer (no bias)."""
    c_in, c_out = int(record.get("in_channels", 0)), int(record.get("out_channels", 0))
    taps = max(1, int(record.get("kernel", 0) or 0)) ** 2
    if layer_op in ("conv", "deconv"):
        return c_out * (c_in // max(1, int(record.get("groups", 1) or 1))) * taps
    if layer_op == "dwconv":
        return c_out * taps
    if layer_op == "fc":
        return c_out * c_in
    return None


def _has_bias(record: dict, layer_op: str | None) -> bool:
    """Whether the kernel's conv/fc layer has a bias (more parameters than weights)."""
    weight = _weight_elements(record, layer_op)
    return weight is not None and _parameters(record) > weight


def _tensors(record: dict, layer_op: str | None) -> list[float]:
    """Sizes of the layer's parameter tensors (what the framework keeps apart)."""
    total = _sizes(record)["weights"]
    if layer_op == "batchnorm":
        return [total / 2, total / 2]  # scale and shift
    weight = _weight_elements(record, layer_op)
    if weight is not None and total > weight:
        return [float(weight), total - weight]  # weight and bias
    return [total]
