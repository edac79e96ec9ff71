"""NestDNN scheduler decision time for six apps (wall clock, this machine).

Builds the six apps' profiles on the Galaxy S8 (latencies simulated on the big
cores), then times one scheduling decision for all six running apps with 400 MB
of memory: MinTotalCost and MinMaxCost, from zero (full greedy, 100 units of
1 %) and from the cache (70 % of the units cached), over several alphas. Prints
the median and 90th percentile decision time and the cost-function evaluations
per decision. Decision time is machine- and Python-dependent: it is measured
here, never asserted in tests.

Usage: ``python benchmarks/nestdnn_scheduler.py [--repeat N] [--soc snapdragon835]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import simulator
from policies.nestdnn.manager import AppState, demands
from policies.nestdnn.scheduler import CachedScheduler
from workloads.multicapacity.latency import profile_latencies
from workloads.multicapacity.profile import load_profiles

ALPHAS = (0.01, 0.1, 0.3, 1.0)
MEMORY = 400e6


def six_apps(soc: str, processor: str) -> list:
    profiles = profile_latencies(load_profiles("nestdnn"), simulator.load_soc(soc), processor)
    apps = [AppState(name=name, job=name, profile=p, baseline=p.knee())
            for name, p in profiles.items()]
    return demands(apps)


def time_decisions(apps, objective: str, cached: bool, repeat: int) -> tuple[list, float]:
    """Seconds per decision and evaluations per decision."""
    seconds, evaluations = [], 0
    for alpha in ALPHAS:
        scheduler = CachedScheduler(objective, 0.7 if cached else 0.0,
                                    10_000 if cached else 1)
        scheduler.decide(apps, alpha, MEMORY)  # fills the cache
        for _ in range(repeat):
            start = time.perf_counter()
            allocation = scheduler.decide(apps, alpha, MEMORY)
            seconds.append(time.perf_counter() - start)
            evaluations += allocation.evaluations
    return seconds, evaluations / (repeat * len(ALPHAS))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200, help="decisions per alpha")
    parser.add_argument("--soc", default="snapdragon835")
    parser.add_argument("--processor", default="cpu.big")
    args = parser.parse_args(argv)
    apps = six_apps(args.soc, args.processor)
    print(f"six apps ({', '.join(a.name for a in apps)}), 400 MB, alphas {ALPHAS}, "
          f"{args.repeat} decisions per alpha")
    for objective, label in (("total", "MinTotalCost"), ("max", "MinMaxCost")):
        for cached in (False, True):
            seconds, evaluations = time_decisions(apps, objective, cached, args.repeat)
            p90 = statistics.quantiles(seconds, n=10)[-1]
            print(f"  {label:12s} {'cached' if cached else 'full  '}: median "
                  f"{1e3 * statistics.median(seconds):6.3f} ms, p90 {1e3 * p90:6.3f} ms, "
                  f"{evaluations:7.0f} cost evaluations per decision")


if __name__ == "__main__":
    main()
