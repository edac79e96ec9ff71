"""Engine throughput: simulated kernels per wall-clock second.

Runs the full engine (power integration, schedutil DVFS, thermal RC network and
trip governor all on) on long kernel chains and on a wide DAG, and, in the
same process, a raw SimPy loop doing the same number of resource acquire +
timeout steps. Prints kernels/s for both and their ratio (the design aims at
>= 0.5).

Usage: ``python benchmarks/engine.py [--kernels N] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import time

import pandas as pd
import simpy

from simulator.engine.simulation import simulate
from simulator.spec.experiment import ExperimentSpec
from simulator.trace import trace_from_table


def raw_simpy(n: int) -> float:
    """Seconds for ``n`` acquire + timeout + release steps in plain SimPy."""
    env = simpy.Environment()
    resource = simpy.Resource(env, capacity=1)

    def worker():
        for _ in range(n):
            with resource.request() as request:
                yield request
                yield env.timeout(1e-4)

    env.process(worker())
    start = time.perf_counter()
    env.run()
    return time.perf_counter() - start


def chain_trace(n: int, width: int = 1):
    """``n`` small conv kernels: ``width`` independent chains."""
    rows = []
    for i in range(n):
        dep = i - width
        rows.append({"id": i, "name": f"k{i}", "op": "conv", "pass": "fwd",
                     "precision": "fp32", "flops": 2e6, "bytes_in": 4e4, "bytes_out": 4e4,
                     "weight_bytes": 1e4, "deps": str(dep) if dep >= 0 else "",
                     "kernel": 3, "stride": 1})
    return trace_from_table(pd.DataFrame(rows))


def engine(trace, processor: str, cores: int, iterations: int = 1) -> float:
    """Seconds for the engine to run ``trace`` with power, DVFS and thermal on."""
    spec = ExperimentSpec.model_validate({
        "name": "bench", "soc": "snapdragon865",
        "workload": {"trace": "<memory>", "iterations": iterations},
        "policy": {"name": "single", "processor": processor, "cores": cores},
        "dvfs": {"governor": "schedutil"}, "thermal": {"governor": True}})
    start = time.perf_counter()
    simulate(spec, traces={0: trace})
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    n = args.kernels
    from workloads.generate import generate_trace

    resnet = generate_trace("resnet18", mode="training", batch=8, input_size=32)
    repeats = max(1, n // len(resnet))
    cases = {"chain, 1 core": (chain_trace(n), "cpu.gold", 1, 1),
             "4 chains, 3 cores": (chain_trace(n, width=4), "cpu.gold", 3, 1),
             f"resnet18 train x{repeats}": (resnet, "cpu.gold", 3, repeats)}
    raw = min(raw_simpy(n) for _ in range(args.repeat))
    print(f"raw SimPy acquire+timeout: {n / raw:12,.0f} steps/s ({n} steps)")
    for label, (trace, proc, cores, iterations) in cases.items():
        kernels = len(trace) * iterations
        best = min(engine(trace, proc, cores, iterations) for _ in range(args.repeat))
        ratio = (kernels / best) / (n / raw)
        print(f"engine ({label:22s}): {kernels / best:12,.0f} kernels/s   ratio {ratio:.2f}")


if __name__ == "__main__":
    main()
