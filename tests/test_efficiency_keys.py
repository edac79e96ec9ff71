"""Every efficiency key in every SoC file is reachable by a kernel the project emits.

A key the cost model never looks up is a dead number: it reads as calibrated and
changes nothing. (``conv.bwd_data`` sat in the CPU tables of three SoC files meant
for a convolution's error gradient, which the generator emits as ``deconv``; it
only ever applied to the error gradient of a transposed convolution.) The kernels the project can
emit are gathered from the zoo generator (every model, inference in every
precision, training in FP32, with every mixed-precision algorithm and every
framework lowering), the importers' op maps, and the policies (each one's
conformance run, with the cost model's look-ups recorded).
"""

from __future__ import annotations

import pytest

import policies  # noqa: F401  (registers built-ins)
from simulator.engine.simulation import simulate
from simulator.hardware.cost import CostModel
from simulator.library import load_soc, soc_names
from simulator.ops import CATEGORIES, OP_KINDS, PRECISIONS
from simulator.policy import POLICIES
from simulator.spec.experiment import ExperimentSpec
from workloads.frameworks import FRAMEWORKS, apply_framework
from workloads.generate import generate_trace
from workloads.importers import mobile_ml_benchmark, onnx_model
from workloads.mixed_precision import algorithm_names, apply_algorithm
from workloads.zoo import MODELS

PASSES = ("fwd", "bwd_data", "bwd_weight", "update", "other")


def _kernels_of(trace) -> set[tuple[str, str, str]]:
    table = trace.table
    return set(zip(table["op"], table["pass"], table["precision"]))


@pytest.fixture(scope="module")
def emitted() -> set[tuple[str, str, str]]:
    """(op, pass, precision) of every kernel the project can emit."""
    found: set[tuple[str, str, str]] = set()
    for model in _covering_models():
        for precision in PRECISIONS:
            found |= _kernels_of(generate_trace(model, "inference", precision=precision))
        training = generate_trace(model, "training")
        found |= _kernels_of(training)
        for algorithm in algorithm_names():
            found |= _kernels_of(apply_algorithm(training, algorithm))
        for framework in FRAMEWORKS.names():
            found |= _kernels_of(apply_framework(training, framework))
    # the ONNX importer decides Conv/Gemm/MatMul/Gather per node (onnx_model._kind)
    for kind in (*mobile_ml_benchmark.OPERATIONS.values(), *onnx_model.KINDS.values(),
                 "conv", "dwconv", "fc", "matmul", "embedding", "slice"):
        for precision in ("fp32", "int8"):
            found.add((kind, "fwd", precision))
    found |= _policy_kernels()
    unknown = {op for op, _, _ in found if op not in OP_KINDS}
    assert not unknown, f"emitted ops that are not op kinds: {unknown}"
    return found


def _covering_models() -> list[str]:
    """Few zoo models whose layers use every layer op any zoo model uses (the
    kernels a model lowers to follow from its layer ops; lowering all ~40
    models in every mode costs minutes)."""
    ops = {name: {layer.op for layer in MODELS.get(name)().layers} for name in MODELS.names()}
    needed, chosen = set().union(*ops.values()), []
    while needed:
        best = max(sorted(ops), key=lambda name: len(ops[name] & needed))
        chosen.append(best)
        needed -= ops[best]
    return chosen


def _policy_kernels() -> set[tuple[str, str, str]]:
    """Kernels the policies cost (their rewrites add copies, barriers, decoders)."""
    seen: set[tuple[str, str, str]] = set()
    original = CostModel.cost

    def recording(self, processor, units, **kernel):
        seen.add((kernel["op"], kernel["pass_"], kernel["precision"]))
        return original(self, processor, units, **kernel)

    CostModel.cost = recording
    try:
        for name in POLICIES.names():
            conformance = POLICIES.get(name).conformance
            simulate(ExperimentSpec.model_validate({
                "name": f"keys-{name}", "soc": "snapdragon865",
                "workload": {**conformance["workload"], "iterations": 1},
                "policy": {"name": name, **conformance["params"]}, "seed": 0}))
    finally:
        CostModel.cost = original
    return seen


def _keys(table: dict, where: str):
    """(key, precision or None, where) of an efficiency table, nested tables flattened."""
    for key, value in table.items():
        if isinstance(value, dict):
            for inner in value:
                yield inner, key, f"{where}.{key}.{inner}"
        else:
            yield key, None, f"{where}.{key}"


def _reachable(key: str, precision: str | None, emitted) -> bool:
    if key == "default":
        return True
    name, _, pass_ = key.partition(".")
    if pass_ and pass_ not in PASSES:
        return False
    for op, kernel_pass, kernel_precision in emitted:
        if precision is not None and kernel_precision != precision:
            continue
        if pass_ and kernel_pass != pass_:
            continue
        if name == op or (name in CATEGORIES and OP_KINDS[op].category == name):
            return True
    return False


@pytest.mark.parametrize("soc", soc_names())
def test_every_efficiency_key_is_reachable(soc, emitted):
    spec = load_soc(soc)
    dead = []
    for processor, proc in spec.processors().items():
        tables = [(proc.efficiency, f"{processor}.efficiency"),
                  (proc.memory_efficiency, f"{processor}.memory_efficiency")]
        tables += [(lib.efficiency, f"{processor}.libraries.{name}.efficiency")
                   for name, lib in proc.libraries.items()]
        for table, where in tables:
            dead += [path for key, precision, path in _keys(table, where)
                     if not _reachable(key, precision, emitted)]
    assert not dead, f"{soc}: efficiency keys no emitted kernel looks up: {', '.join(dead)}"


def test_a_dead_key_is_found(emitted):
    # the check itself: keys no kernel can look up are found, live ones are not
    assert not _reachable("maxpool.bwd_weight", None, emitted)  # pooling has no weights
    assert not _reachable("sgd_update.fwd", None, emitted)
    assert not _reachable("conv.backward", None, emitted)  # not a pass
    assert _reachable("deconv.bwd_data", None, emitted)  # a conv's error gradient
    assert _reachable("compute.bwd_weight", "int8", emitted)
