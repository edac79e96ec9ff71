"""Fit the DSP's per-operator graph-preparation time to Mandheling's figure.

Engines rebuild the DSP compute graph every batch: 212 ms per VGG-16 batch on
MNN, 304 ms on TFLite (Xiaomi 10). We run the engines as they are, before
Mandheling's techniques: ``mandheling`` with every technique off (each
operator the DSP supports goes to the DSP, as a framework's DSP delegate
does; VGG-16, CIFAR-10, batch 64, SD865, top OPPs), count the operators of
its DSP subgraphs and the preparation kernels, and solve

    figure = operators x graph_setup + subgraphs x (subgraph_setup + node step)

for ``graph_setup`` (``dsp.libraries.<library>.graph_setup`` in the SoC file;
``subgraph_setup``, the per-graph FastRPC session work, and the node step,
the library's ``dispatch_overhead`` that each preparation kernel pays, are
estimates in the SoC file). The result is about two FastRPC round trips per
operator. VGG-16 without batch norm has few subgraphs, so the per-operator
part carries the figure; models with many small subgraphs (ResNets) follow.

Run: ``python -m validation.mandheling.fit_prepare``.
"""

from __future__ import annotations

from simulator.engine.simulation import simulate
from simulator.library import load_soc
from simulator.spec.experiment import ExperimentSpec
from validation.mandheling import refs

SOC = "snapdragon865"
# The engine as it is: no co-scheduling (DSP delegate), no technique.
STOCK_ENGINE = {"co_scheduling": False, "adaptive_rescaling": False, "batch_splitting": False,
                "subgraph_reuse": False, "parallel": False}


def operators(library: str = "mnn") -> tuple[int, int]:
    """(operators, subgraphs) of Mandheling's DSP part without reuse."""
    exp = ExperimentSpec.model_validate({
        "name": "prepare", "soc": SOC, "workload": {**refs.VGG16_CIFAR, "iterations": 1},
        "policy": {"name": "mandheling", "library": library, **STOCK_ENGINE},
        "dvfs": {"governor": "performance"},
        "outputs": {"timeline": False, "kernels": False, "timeseries": False}})
    soc = load_soc(SOC)
    dsp = soc.dsp
    # One second per operator makes the preparation time count the operators.
    libraries = {**dsp.libraries, library: dsp.libraries[library].model_copy(
        update={"graph_setup": 1.0, "subgraph_setup": 0.0})}
    soc = soc.model_copy(update={"dsp": dsp.model_copy(update={"libraries": libraries})})
    metrics = simulate(exp, soc=soc).metrics
    return round(metrics["mandheling.graph_prepare_s"]), int(metrics["mandheling.dsp_subgraphs"])


def fit() -> dict[str, float]:
    """``graph_setup`` (s) per library."""
    dsp = load_soc(SOC).dsp
    out = {}
    for library, ms in refs.GRAPH_PREPARE_MS.items():
        lib = dsp.libraries[library]
        step = dsp.dispatch_overhead if lib.dispatch_overhead is None else lib.dispatch_overhead
        per_graph = (lib.subgraph_setup or 0.0) + step
        ops, subgraphs = operators(library)
        out[library] = (ms * 1e-3 - subgraphs * per_graph) / ops
        print(f"{library}: {ops} operators in {subgraphs} subgraphs -> graph_setup "
              f"{out[library] * 1e3:.3f} ms")
    return out


if __name__ == "__main__":
    fit()
