"""Fast-forward against full kernel-level simulation, and what it buys in wall time.

A shorter version of the 150-epoch run (VGG-11 on CIFAR-10, batch 64, SD888, CPU at
maximum frequency, thermal governor on: the big cores throttle) is simulated with and
without ``fast_forward``; the script prints the simulated time, energy, peak temperature
and wall time of both and their differences.

Run: ``python benchmarks/fast_forward.py [--batches 1500] [--policy mnn-fp32]``.
"""

from __future__ import annotations

import argparse
import time

from simulator.engine.simulation import simulate
from simulator.spec.experiment import ExperimentSpec


def run(batches: int, policy: str, fast_forward: bool) -> tuple[dict, float]:
    """(metrics, wall seconds) of one run."""
    params = {"name": policy, "cpu_freq": "max"}
    if policy == "mandheling":
        params["start_batch"] = 0
    exp = ExperimentSpec.model_validate({
        "name": "ff-bench", "soc": "snapdragon888",
        "workload": {"model": "vgg11", "mode": "training", "batch": 64, "input_size": 32,
                     "num_classes": 10, "options": {"batch_norm": False},
                     "batches": batches, "fast_forward": fast_forward},
        "policy": params,
        "outputs": {"timeline": False, "kernels": False, "sample_period": "10 s"}})
    start = time.perf_counter()
    metrics = simulate(exp).metrics
    return metrics, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=1500)
    parser.add_argument("--policy", default="mnn-fp32")
    args = parser.parse_args()
    exact, exact_wall = run(args.batches, args.policy, False)
    fast, fast_wall = run(args.batches, args.policy, True)
    print(f"{args.policy}, VGG-11, {args.batches} batches on SD888")
    for metric in ("makespan_s", "energy_j", "peak_temp_c", "min_freq_cpu.gold_hz"):
        diff = 100 * (fast[metric] - exact[metric]) / exact[metric]
        print(f"  {metric:22s} kernel level {exact[metric]:12.4g}   fast-forward "
              f"{fast[metric]:12.4g}   ({diff:+.2f} %)")
    print(f"  replayed iterations    {fast['replayed_iterations']:.0f} of {args.batches}")
    print(f"  wall time              kernel level {exact_wall:.1f} s   fast-forward "
          f"{fast_wall:.1f} s   ({exact_wall / fast_wall:.1f}x)")


if __name__ == "__main__":
    main()
