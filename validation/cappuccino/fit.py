"""Fit the phones' RenderScript and Java CPU code to Cappuccino's Nexus 5 row.

RenderScript accumulates each output's dot product as one dependent FMA
chain, so its bound is one FMA per chain latency: with ``c`` cycles of latency
(:data:`CHAIN_CYCLES`, estimates per core), ``l`` FP32 lanes per FMA (1 scalar,
4 in imprecise mode's float4 code) and ``p`` FP32 FLOP/cycle of peak, an
efficiency of ``2 l / (c p)``. Two numbers are fitted, on the Nexus 5
(Snapdragon 800) only:

* ``K``, how much slower than that bound RenderScript's CPU code runs
  (element accessors, bounds checks, IEEE-754 VFP code): fitted to the exact
  parallel column (AlexNet, SqueezeNet, GoogLeNet). Every phone's CPU
  libraries follow from it: ``renderscript-exact`` and ``renderscript-relaxed``
  at ``2 / (c p K)``, ``renderscript-imprecise`` at ``8 / (c4 p K)`` (the
  trace's ``simd_waste`` says how many lanes idle);
* ``F``, the interpretation overhead of single-threaded Java over the same
  scalar code (``java`` = exact / ``F``): fitted to the single-threaded row.

Both are geometric means of measured over simulated time, iterated because
memory-bound layers do not scale with the code's speed. The imprecise column,
the GPU libraries and the other phones are predictions.

Run: ``python -m validation.cappuccino.fit [--fit]`` (prints the table;
with ``--fit`` the fitted ``K``, ``F`` and the efficiencies to write in the
three SoC files).
"""

from __future__ import annotations

import argparse
import math
from functools import lru_cache

from simulator.engine.simulation import simulate
from simulator.library import load_soc
from simulator.spec.experiment import ExperimentSpec
from simulator.spec.soc import SocSpec
from validation.cappuccino import refs

POLICIES = {"baseline": {"name": "single-thread"},
            "parallel": {"name": "cappuccino", "mode": "exact"},
            "imprecise": {"name": "cappuccino", "mode": "imprecise"}}
PHONES = ("snapdragon800", "snapdragon810", "snapdragon820")
# Dependent FMA latency in cycles with forwarding (E, U), scalar and float4: Krait and A57
# 5 / 5, Kryo 4 / 4; the in-order A53 4 / 5 (a float4 FMA takes two 64-bit passes).
CHAIN_CYCLES = {"krait-400": (5, 5), "cortex-a57": (5, 5), "cortex-a53": (4, 5),
                "kryo": (4, 4)}
LANES = 4  # float4 vector code in imprecise mode
ITERATIONS = 4


def run(soc: str, model: str, mode: str, soc_spec: SocSpec | None = None):
    """One inference of ``model`` on ``soc`` in a Cappuccino column (performance
    governor, thermal governor off: the paper's benchmark setting)."""
    spec = ExperimentSpec.model_validate({
        "name": "cappuccino", "soc": soc, "workload": {"model": model},
        "policy": POLICIES[mode], "dvfs": {"governor": "performance"},
        "thermal": {"governor": False},
        "outputs": {"timeline": False, "kernels": False, "timeseries": False}})
    return simulate(spec, soc=soc_spec)


@lru_cache(maxsize=None)
def latency_ms(soc: str, model: str, mode: str) -> float:
    """Simulated latency (ms) with the SoC file as committed."""
    return run(soc, model, mode).metrics["latency_s"] * 1e3


def chain_bound(soc: SocSpec, cluster: str, lanes: int = 1) -> float:
    """Efficiency of one dependent FMA chain of ``lanes`` FP32 lanes per thread."""
    proc = soc.cpu[cluster]
    scalar_cycles, vector_cycles = CHAIN_CYCLES[proc.core]
    cycles = scalar_cycles if lanes == 1 else vector_cycles
    return 2.0 * lanes / (cycles * proc.ops_per_cycle["fp32"])


def library_efficiencies(soc: SocSpec, cluster: str, code_overhead: float,
                         java_overhead: float) -> dict[str, float]:
    """The CPU library efficiencies of one cluster for overheads ``K`` and ``F``."""
    scalar = chain_bound(soc, cluster) / code_overhead
    return {"renderscript-exact": scalar, "renderscript-relaxed": scalar,
            "renderscript-imprecise": min(1.0, chain_bound(soc, cluster, LANES) / code_overhead),
            "java": scalar / java_overhead}


def with_overheads(soc: SocSpec, code_overhead: float, java_overhead: float) -> SocSpec:
    """``soc`` with its CPU clusters' RenderScript and Java libraries for ``K`` and ``F``."""
    cpu = {}
    for cluster, proc in soc.cpu.items():
        libraries = dict(proc.libraries)
        for name, value in library_efficiencies(soc, cluster, code_overhead,
                                                java_overhead).items():
            libraries[name] = libraries[name].model_copy(update={"efficiency": {"default": value}})
        cpu[cluster] = proc.model_copy(update={"libraries": libraries})
    return soc.model_copy(update={"cpu": cpu})


def committed_overheads(soc: SocSpec) -> tuple[float, float]:
    """(``K``, ``F``) as written in a phone's file (its first CPU cluster)."""
    cluster = next(iter(soc.cpu))
    libraries = soc.cpu[cluster].libraries
    exact = libraries["renderscript-exact"].efficiency["default"]
    java = libraries["java"].efficiency["default"]
    return chain_bound(soc, cluster) / exact, exact / java


def _ratio(soc: SocSpec, mode: str) -> float:
    """Geometric mean over the Nexus 5 models of measured / simulated time in ``mode``."""
    column = refs.MODES.index(mode)
    logs = [math.log(row[column] / (run(refs.SOC, model, mode, soc).metrics["latency_s"] * 1e3))
            for model, row in refs.NEXUS5_MS.items()]
    return math.exp(sum(logs) / len(logs))


def fit() -> tuple[float, float]:
    """``K`` (exact parallel column) and ``F`` (single-threaded row) on the Nexus 5."""
    soc = load_soc(refs.SOC)
    code, java = committed_overheads(soc)
    for _ in range(ITERATIONS):
        code *= _ratio(with_overheads(soc, code, java), "parallel")
    for _ in range(ITERATIONS):
        java *= _ratio(with_overheads(soc, code, java), "baseline")
    return code, java


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", action="store_true", help="fit K and F, print the efficiencies")
    args = parser.parse_args(argv)
    code, java = committed_overheads(load_soc(refs.SOC))
    if args.fit:
        code, java = fit()
        print(f"fitted RenderScript code overhead K = {code:.3f}, Java overhead F = {java:.2f}")
        for phone in PHONES:
            soc = load_soc(phone)
            for cluster in soc.cpu:
                values = library_efficiencies(soc, cluster, code, java)
                print(f"  {phone} cpu.{cluster}: "
                      + ", ".join(f"{name} {value:.4g}" for name, value in values.items()))
    soc = with_overheads(load_soc(refs.SOC), code, java)
    print(f"\nNexus 5 (K = {code:.3f}, F = {java:.2f}), simulated / measured")
    print(f"{'model':15s}" + "".join(f"{m:>24s}" for m in refs.MODES))
    for model, measured in refs.NEXUS5_MS.items():
        cells = [f"{run(refs.SOC, model, mode, soc).metrics['latency_s'] * 1e3:9.1f}/"
                 f"{ms:9.1f} ms" for mode, ms in zip(refs.MODES, measured)]
        print(f"{model:15s}" + "".join(f"{c:>24s}" for c in cells))


if __name__ == "__main__":
    main()
