"""DynO's scheduler: wall-clock decision time per invocation, for each CNN.

A decision is the profiler's estimates for every candidate <split, bitwidth>
followed by the ordered constraint/target selection (what DynO re-runs when an
estimate moves by more than 5 %). The policy is set up once on the Jetson +
desktop testbed over 4G (profile, offline estimates: not timed), then each
invocation is timed. DynO reports at most 14 ms (11 ms geometric mean) on the
Jetson's Carmel CPU; this measures the machine running the simulator.

Usage: ``python benchmarks/dyno_scheduler.py [--invocations N] [--models ...]``.
"""

from __future__ import annotations

import argparse

import numpy as np

from validation.dyno.overhead import decision_times
from workloads.generate import generate_trace
from workloads.splits.cuts import candidate_splits

MODELS = ("mobilenet_v2", "resnet152", "inception_v3", "vgg19")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--invocations", type=int, default=50)
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    args = parser.parse_args(argv)
    print(f"{'model':14s} {'configs':>8s} {'min ms':>8s} {'geomean ms':>11s} "
          f"{'median ms':>10s} {'max ms':>8s}")
    for model in args.models:
        ms = np.array(decision_times(model, args.invocations)) * 1e3
        configs = len(candidate_splits(generate_trace(model))) * 7 - 6
        print(f"{model:14s} {configs:8d} {ms.min():8.3f} {np.exp(np.log(ms).mean()):11.3f} "
              f"{np.median(ms):10.3f} {ms.max():8.3f}")


if __name__ == "__main__":
    main()
