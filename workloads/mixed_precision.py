"""Mixed-precision training algorithms as data, and their translation of traces.

An algorithm (``workloads/algorithms/<name>.yaml``) follows the four-element
description of Mandheling (Xu et al., MobiCom 2022):

1. ``translation``: rules turning each FP32 forward kernel into a sequence of
   mixed-precision kernels (NITI: conv -> INT8 conv + reduce_max + shift), and
   the conversion of the model input (``translation.input``);
2. ``backprop``: the same for error and weight gradients;
3. ``weights``: how weights are stored, initialised and updated (informative);
4. ``optimizer``: optimiser and loss, and what each ``sgd_update`` becomes.

``data_types`` gives W / A / G / WU as the paper states them and the nearest
trace precision (FP24 -> fp32). A rule's first matching entry wins; a kernel
no rule matches keeps its op with the precision of its pass (fwd: activations,
bwd_*: gradients, update: weight_update). The YAML format is documented in
``docs/workloads.md``.

Cost model of one emitted step (``n`` = elements of the original kernel's
output, input or weights, from its bytes and precision):

* the main step (``op: $op``) keeps the original flops (x ``flops_scale``) and
  moves the original element counts at its own storage types;
* an auxiliary step costs ``flops_per_element x n`` and reads/writes ``n``
  elements at its ``input``/``output`` types. Rescaling steps read the INT32
  accumulators (4 bytes per element) that the main step wrote, which is why
  dynamic rescaling costs about as much again as the op it follows.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from simulator.errors import ConfigError
from simulator.registry import Registry
from simulator.spec.yamlio import read_yaml, validate
from simulator.trace import BYTES_PER_ELEMENT, Trace, trace_from_table
from workloads.algorithm_schema import (  # noqa: F401  (re-exported: the file format)
    MAIN,
    ROLES,
    SCALAR_BYTES,
    STORAGE_BYTES,
    Algorithm,
    Backprop,
    DataType,
    DataTypes,
    Match,
    Optimizer,
    Rule,
    Step,
    Translation,
    Weights,
)

from .named_files import named_file

ALGORITHM_DIR = Path(__file__).parent / "algorithms"
DEFAULT_ALGORITHM = "niti"


# ---------------------------------------------------------------- loading
def algorithm_names() -> list[str]:
    """Names of the algorithms shipped in ``workloads/algorithms/``."""
    return ALGORITHMS.names()


# The shipped algorithm files, by name (a plain registry: "did you mean" on a typo).
ALGORITHMS: Registry[Path] = Registry("algorithm")
for _path in sorted(ALGORITHM_DIR.glob("*.yaml")):
    ALGORITHMS.register(_path.stem)(_path)


def load_algorithm(name_or_path: str | Path = DEFAULT_ALGORITHM) -> Algorithm:
    """Load and validate an algorithm by name (``niti``) or YAML path.

    Raises:
        ConfigError: unknown name (with suggestions), unreadable YAML, or a
            schema violation, naming the file and the YAML path.
    """
    path = named_file(name_or_path, ALGORITHMS, "algorithm")
    data = read_yaml(path)  # bounded: size, depth, aliases, numbers
    if not isinstance(data, dict):
        raise ConfigError("an algorithm file must be a mapping", file=str(path))
    return validate(Algorithm, data, file=str(path))


# ------------------------------------------------------------ translation
def apply_algorithm(trace: Trace, algorithm: str | Path | Algorithm = DEFAULT_ALGORITHM
                    ) -> Trace:
    """Translate an FP32 trace into the kernels of a mixed-precision algorithm.

    Each kernel becomes its rule's steps, chained in order: the first step
    inherits the kernel's dependencies, every later step waits for the one
    before (and for the step that wrote its ``input`` type, when an earlier
    step of the rule did: NITI's Shift reads the INT32 accumulators the
    operator wrote, not only the ReduceMax's scalar), and the kernel's
    dependants wait for the last step. Kernels are
    renumbered; shape, ``layer`` and ``model`` columns are kept, auxiliary
    kernels are named ``<kernel>.<suffix>``.

    Args:
        trace: a generated or imported trace (normally fp32).
        algorithm: a name, a YAML path or a loaded :class:`Algorithm`.

    Returns:
        The translated, validated trace.
    """
    algo = algorithm if isinstance(algorithm, Algorithm) else load_algorithm(algorithm)
    records = trace.table.to_dict("records")
    rows: list[dict] = []
    last: dict[int, int] = {}  # old kernel id -> id of its last step
    entries = [r for r in records if r["pass"] == "fwd" and not r["deps"]]
    input_tail: tuple[int, ...] = ()
    if algo.translation.input and entries:
        first = entries[0]
        n = first["bytes_in"] / BYTES_PER_ELEMENT[first["precision"]]
        template = {**first, "layer": "input", "name": "input"}
        for step in algo.translation.input:
            input_tail = (_emit_auxiliary(rows, algo, step, template, n, input_tail),)
    for record in records:
        deps = tuple(last[d] for d in record["deps"])
        if not record["deps"] and record["pass"] == "fwd":
            deps += input_tail
        written: dict[str, int] = {}  # storage type -> the rule's step that wrote it
        for step in algo.steps_for(record["op"], record["pass"]):
            # a step reading a tensor an earlier step of the rule wrote (a Shift
            # re-reading the INT32 accumulators) depends on that step too
            source = written.get(step.input) if step.input is not None else None
            if source is not None and source not in deps:
                deps = (*deps, source)
            if step.is_main:
                kid = _emit_main(rows, algo, step, record, deps)
            else:
                per = {"output": "bytes_out", "input": "bytes_in", "weights": "weight_bytes"}
                n = record[per[step.per]] / BYTES_PER_ELEMENT[record["precision"]]
                kid = _emit_auxiliary(rows, algo, step, record, n, deps)
            if step.output is not None and step.output != "scalar":
                written[step.output] = kid
            deps = (kid,)
        last[record["id"]] = deps[0]
    return trace_from_table(pd.DataFrame(rows), source=f"{trace.source} + {algo.name}")


def _emit_main(rows: list[dict], algo: Algorithm, step: Step, record: dict,
               deps: tuple[int, ...]) -> int:
    precision = algo.precision(step.precision, record["pass"])
    old = BYTES_PER_ELEMENT[record["precision"]]
    out_bytes = (SCALAR_BYTES if step.output == "scalar" else
                 record["bytes_out"] / old * algo.storage_bytes(step.output, precision))
    rows.append({**record, "id": len(rows), "precision": precision, "deps": deps,
                 "flops": record["flops"] * step.flops_scale,
                 "bytes_in": record["bytes_in"] / old * algo.storage_bytes(step.input, precision),
                 "bytes_out": out_bytes,
                 "weight_bytes": (record["weight_bytes"] / old
                                  * algo.storage_bytes(step.weights, precision))})
    return len(rows) - 1


def _emit_auxiliary(rows: list[dict], algo: Algorithm, step: Step, record: dict, n: float,
                    deps: tuple[int, ...]) -> int:
    precision = algo.precision(step.precision, record["pass"])
    read = n * algo.storage_bytes(step.input, precision)
    written = SCALAR_BYTES if step.output == "scalar" else (
        n * algo.storage_bytes(step.output, precision))
    # Steps over the weights (rotation, quantisation) read them as weights so
    # the cache model treats them like the layer's parameters.
    weights = step.per == "weights"
    rows.append({**record, "id": len(rows), "op": step.op, "precision": precision,
                 "name": f"{record['name']}.{step.suffix or step.op}", "deps": deps,
                 "flops": float(math.ceil(step.flops_per_element * n)),
                 "bytes_in": 0.0 if weights else float(read),
                 "weight_bytes": float(read) if weights else 0.0,
                 "bytes_out": float(written)})
    return len(rows) - 1
