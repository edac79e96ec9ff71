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

* ``R``, the cycles a scalar thread spends per kernel-row loop (loop exit,
  next row's index arithmetic): exact-mode code runs in Caffe's planar order,
  its innermost loop along one kernel row, so a 1x1 convolution pays ``R`` on
  every multiply-accumulate and an 11x11 one on one in eleven. Fitted jointly
  with ``K`` on the same exact column (least squares on log errors): one ``K``
  alone leaves AlexNet (long 11x11/5x5 rows, FC) 16 % slow and GoogLeNet
  (38 of its 57 convolutions are 1x1) 12 % fast. Java runs the same loop nest,
  ``F`` times slower, so its row cost is ``R F``.

``K`` and ``R`` are geometric means / a 1-D search, iterated because
memory-bound layers do not scale with the code's speed. The imprecise column is
calibration data (the seed notes list it) but nothing is fitted to it: the
float4 libraries follow from ``K`` and the chain latencies, so the column tests
the vector-code mechanism (it fails for AlexNet and GoogLeNet, see
``docs/cappuccino_xenos.md``). The GPU libraries and the other phones are
predictions.

Java's overhead is a property of the phone's software as well as its cores:
the Nexus 5 ran Android 4.4, whose default runtime is Dalvik with its trace
JIT; the Nexus 6P and Galaxy S7 shipped Android 6.0, where ART compiles apps
ahead of time (:data:`PHONE_RUNTIME`). ``F`` is fitted on Dalvik; ART's is
``F`` over :data:`ART_SPEEDUP` (an estimate, see there).

Run: ``python -m validation.cappuccino.fit [--fit]`` (prints the table;
with ``--fit`` the fitted ``K``, ``R``, ``F`` and the library values to write in
the three SoC files).
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
# Android version and Java runtime each phone shipped with (V): Nexus 5, Android 4.4 KitKat,
# Dalvik (ART only as a developer option); Nexus 6P and Galaxy S7, Android 6.0 Marshmallow,
# ART (the default runtime since Android 5.0). Google's and Samsung's launch specifications.
PHONE_RUNTIME = {"snapdragon800": ("Android 4.4", "dalvik"),
                 "snapdragon810": ("Android 6.0", "art"),
                 "snapdragon820": ("Android 6.0", "art")}
# How much faster ART runs the same Java code than Dalvik's JIT: E, Google's Android L
# announcement (Google I/O 2014, as reported by InfoQ, "up to 2x" over Dalvik). An upper
# figure taken as the estimate: loops over float arrays are where AOT compilation helps
# most (no trace-JIT exits, registers allocated over the whole method).
ART_SPEEDUP = {"dalvik": 1.0, "art": 2.0}
# The row-overhead search range (cycles per kernel-row loop).
ROW_RANGE = (0.0, 40.0)


def run(soc: str, model: str, mode: str | dict, soc_spec: SocSpec | None = None):
    """One inference of ``model`` (a paper's CNN name, run as ``refs.ZOO_MODEL``'s
    form, or any zoo model) on ``soc`` in a Cappuccino column, or under a policy
    given as its mapping (performance governor, thermal governor off: the paper's
    benchmark setting)."""
    spec = ExperimentSpec.model_validate({
        "name": "cappuccino", "soc": soc,
        "workload": {"model": refs.ZOO_MODEL.get(model, model)},
        "policy": POLICIES[mode] if isinstance(mode, str) else mode, "dvfs": {"governor": "performance"},
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


def java_overhead(soc_name: str, dalvik_overhead: float) -> float:
    """``F`` on a phone: the Dalvik fit divided by its runtime's speed-up."""
    _, runtime = PHONE_RUNTIME.get(soc_name, ("", "dalvik"))
    return dalvik_overhead / ART_SPEEDUP[runtime]


def library_values(soc: SocSpec, cluster: str, code_overhead: float, row_cycles: float,
                   java: float) -> dict[str, tuple[float, float | None]]:
    """(efficiency, row overhead cycles) of one cluster's CPU libraries for ``K``,
    ``R`` and the phone's Java overhead ``java``."""
    scalar = chain_bound(soc, cluster) / code_overhead
    return {"renderscript-exact": (scalar, row_cycles),
            "renderscript-relaxed": (scalar, row_cycles),
            "renderscript-imprecise": (min(1.0, chain_bound(soc, cluster, LANES)
                                           / code_overhead), None),
            "java": (scalar / java, row_cycles * java)}


def library_efficiencies(soc: SocSpec, cluster: str, code_overhead: float,
                         java_overhead: float) -> dict[str, float]:
    """The CPU library efficiencies of one cluster for overheads ``K`` and ``F``."""
    return {name: eff for name, (eff, _) in
            library_values(soc, cluster, code_overhead, 0.0, java_overhead).items()}


def with_overheads(soc: SocSpec, code_overhead: float, java_overhead: float,
                   row_cycles: float | None = None) -> SocSpec:
    """``soc`` with its CPU clusters' RenderScript and Java libraries for ``K``,
    ``F`` (this phone's) and ``R`` (default: as committed)."""
    if row_cycles is None:
        row_cycles = committed_row_cycles(soc)
    cpu = {}
    for cluster, proc in soc.cpu.items():
        libraries = dict(proc.libraries)
        for name, (eff, row) in library_values(soc, cluster, code_overhead, row_cycles,
                                               java_overhead).items():
            libraries[name] = libraries[name].model_copy(
                update={"efficiency": {"default": eff}, "row_overhead_cycles": row})
        cpu[cluster] = proc.model_copy(update={"libraries": libraries})
    return soc.model_copy(update={"cpu": cpu})


def committed_row_cycles(soc: SocSpec) -> float:
    """``R`` as written in a phone's file (its first CPU cluster)."""
    library = soc.cpu[next(iter(soc.cpu))].libraries["renderscript-exact"]
    return library.row_overhead_cycles or 0.0


def committed_overheads(soc: SocSpec) -> tuple[float, float]:
    """(``K``, ``F``) as written in a phone's file (its first CPU cluster)."""
    cluster = next(iter(soc.cpu))
    libraries = soc.cpu[cluster].libraries
    exact = libraries["renderscript-exact"].efficiency["default"]
    java = libraries["java"].efficiency["default"]
    return chain_bound(soc, cluster) / exact, exact / java


def _logs(soc: SocSpec, mode: str) -> list[float]:
    """log(measured / simulated) per Nexus 5 model in ``mode``."""
    column = refs.MODES.index(mode)
    return [math.log(row[column] / (run(refs.SOC, model, mode, soc).metrics["latency_s"] * 1e3))
            for model, row in refs.NEXUS5_MS.items()]


def _ratio(soc: SocSpec, mode: str) -> float:
    """Geometric mean over the Nexus 5 models of measured / simulated time in ``mode``."""
    logs = _logs(soc, mode)
    return math.exp(sum(logs) / len(logs))


def _fit_code(soc: SocSpec, code: float, java: float, row: float) -> tuple[float, float]:
    """``K`` for a given ``R`` and the sum of squared log errors it leaves."""
    for _ in range(ITERATIONS):
        code *= _ratio(with_overheads(soc, code, java, row), "parallel")
    return code, sum(x * x for x in _logs(with_overheads(soc, code, java, row), "parallel"))


def fit() -> tuple[float, float, float]:
    """``K`` and ``R`` (exact parallel column), ``F`` (single-threaded row) on the Nexus 5."""
    soc = load_soc(refs.SOC)
    code, java = committed_overheads(soc)
    lo, hi = ROW_RANGE
    phi = (math.sqrt(5) - 1) / 2
    for _ in range(18):  # golden-section search on R (about 0.1 cycles wide at the end)
        a, b = hi - phi * (hi - lo), lo + phi * (hi - lo)
        if _fit_code(soc, code, java, a)[1] <= _fit_code(soc, code, java, b)[1]:
            hi = b
        else:
            lo = a
    row = round((lo + hi) / 2, 2)
    code, _ = _fit_code(soc, code, java, row)
    for _ in range(ITERATIONS):
        java *= _ratio(with_overheads(soc, code, java, row), "baseline")
    return code, row, java


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", action="store_true", help="fit K and F, print the efficiencies")
    args = parser.parse_args(argv)
    soc = load_soc(refs.SOC)
    code, java = committed_overheads(soc)
    row = committed_row_cycles(soc)
    if args.fit:
        code, row, java = fit()
        print(f"fitted RenderScript code overhead K = {code:.3f}, row loop R = {row:.2f} "
              f"cycles, Java (Dalvik) overhead F = {java:.3f}")
        for phone in PHONES:
            soc = load_soc(phone)
            version, runtime = PHONE_RUNTIME[phone]
            f_phone = java_overhead(phone, java)
            print(f"  {phone} ({version}, {runtime}, F = {f_phone:.3f})")
            for cluster in soc.cpu:
                values = library_values(soc, cluster, code, row, f_phone)
                print(f"    cpu.{cluster}: " + ", ".join(
                    f"{name} {eff:.4g}" + (f" row {r:.4g}" if r else "")
                    for name, (eff, r) in values.items()))
    soc = with_overheads(load_soc(refs.SOC), code, java, row)
    print(f"\nNexus 5 (K = {code:.3f}, R = {row:.2f}, F = {java:.2f}), simulated / measured")
    print(f"{'model':15s}" + "".join(f"{m:>24s}" for m in refs.MODES))
    for model, measured in refs.NEXUS5_MS.items():
        cells = [f"{run(refs.SOC, model, mode, soc).metrics['latency_s'] * 1e3:9.1f}/"
                 f"{ms:9.1f} ms" for mode, ms in zip(refs.MODES, measured)]
        print(f"{model:15s}" + "".join(f"{c:>24s}" for c in cells))


if __name__ == "__main__":
    main()
