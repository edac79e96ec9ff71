"""Engine throughput, import time and memory of long runs, each next to its goal.

1. **Throughput.** Runs the full engine (power integration, schedutil DVFS,
   thermal RC network and trip governor all on) on long kernel chains and on
   ResNet-18 training iterations, and, in the same process, a raw SimPy loop
   doing the same number of resource acquire + timeout steps. Prints
   kernels/s for both and their ratio; the goal is a ratio >= 0.5 (whole
   ``simulate()`` call: building the plan, running, collecting the tables).
   The run phase alone (``env.run``) is printed too, as is the build time.
   Times are CPU seconds of the process (``time.process_time``).
2. **Import time** of ``import simulator``, of ``socsim --help`` and of what a
   sweep worker imports before its first run (``simulator.engine.simulation``
   and the policies), each in a fresh interpreter (CPU seconds, net of a bare
   interpreter's).
3. **Peak RSS** (``resource.getrusage``) of a 5-kernel chain run 2,000 and
   20,000 times with ``outputs: {kernels: false, timeline: false}``: it should
   be flat in the number of iterations (no per-kernel records kept; growth
   under 10% of the short run's).

Usage: ``python benchmarks/engine.py [--kernels N] [--repeat R] [--skip-import]
[--skip-rss] [--only CASE]``. The machine's load moves every figure; compare runs
made back to back. ``--only CASE --flame FILE`` samples one case with py-spy and
prints where its run phase goes (see :func:`flame`).

Profile (cProfile, issue 21; before the changes, 20,000 kernels):

* chain, 1 core: ~60% of the wall time was building, not running: the ``single``
  policy rebuilds the trace (``serialize`` -> ``trace_from_table``) and the
  runner compiles the plan (``_PlanState``: a dict and a cost-model key per
  row). Python's cyclic GC took ~35% of the whole call (full collections
  walking the tens of thousands of rows that stay alive, finding nothing).
  Per kernel the run already used one SimPy timeout and counters for
  dependencies; its time went to ``Processor._start/_time/_release``,
  ``JobRunner.release/on_done`` and SimPy's own ``step``.
* ResNet-18 training, 3 cores: ~55% of the run went to the per-device thermal
  tick (every 10 ms of simulated time: ``_collect`` and ``take_integrals`` on
  five processors, five schedutil decisions, the RC step, a time-series
  sample), not to kernels: the run is ~0.36 ticks per kernel. The tick's own
  arithmetic is what fixes the energy and temperatures, so it stays; its
  overheads went (see ``docs/engine.md``, "Engine speed").

After the changes (same profile): the chain's GC share is ~2%, its build
halved and its run phase is about as fast as the raw loop (ratio ~0.7-1.0);
what is left of the whole-call gap is building the plan and the trace. The
ResNet-18 case stays bound by the tick: ~50% of its run is ~7,200 ticks of a
device with five processors, seven thermal nodes and 26 time-series values
each, costing several raw SimPy steps apiece in Python: a ratio of 0.5 would
need fewer ticks (which changes results) or a tick and a time-series record
several times cheaper than today's (not found without changing float order).

Third session (lazy integration; cProfile of the ResNet-18 case, 1 s samples):
before, 6,386 ticks each collected five processors' integrals, stepped the RC
network and ran five schedutil decisions: ~45% of the run. Now the sampler
wakes at the same 6,386 steps only because schedutil decides every 10 ms, and
integrates at 256 of them (polls, samples): the wakes cost ~30% of the run, most
of it the five governor decisions (``decide``, ``request``, ``index_at_least``)
and the wake's own bookkeeping; the rest is the kernel path (``Processor._start``,
``_time``, ``_release``, ``JobRunner.release/on_done``, SimPy's ``step``). With the
default 10 ms samples every step is a sample, so every wake integrates and
records 26 values, as before: that case is unchanged.

Fourth session (cProfile of all four cases, 50,000 kernels; same bytes out, checked
with ``identical_outputs.py`` and the four cases' tables): the chain's build was
still ~55% of its call: ``serialize``/``Trace.with_deps`` (later ``Trace.in_order``)
ran Python's collector over 50,000 new tuples (~40% of the rewrite; now paused) and set unions per row, the
plan's fan-out built a grouping dict per row (single successors now skip it). The
run phase, per kernel, lost a ``Timeout`` and its callback (the completion is pushed
onto SimPy's queue as the event itself) and the per-successor ``arrive`` call
(``settle`` was inlined too; it is called again: its cost is inside callgrind's
run-to-run spread). The sampler lost its SimPy process (its own events,
same queue order), its five governor decisions per wake when they are fixed points
(``Schedutil.update``: an exact keep interval per OPP and request), the arithmetic of
an idle processor's period; a sample lost its per-value code appends and Python
power loop. Now: the chain's build + collect is ~0.2-0.3 s of ~0.65 s; ResNet-18
with 1 s samples spends ~70% of its run on the kernel path (``_start``/``_time``/
``_release``, ``JobRunner.release``/``on_done``, ``Task``, SimPy's ``step``), ~30% on
16,580 governor-only wakes (~10 us each: the same run under ``performance`` takes
~0.2 s less); with 10 ms samples about half the run is still the per-step wake
(integration, RC step, sample), in Python: see ``docs/engine.md``, "Engine speed".

Fifth session (the 10 ms ResNet-18 case; same bytes, ``identical_outputs.py``): a wake
no longer walks the quiet processors (a ``stirred`` flag instead of six tests, their
idle energy and node power from a per-length plan), asks an idle processor's governor
again only when its domain changed (``decides_from_domain``, ``FrequencyDomain.version``),
keeps a sample's levels between OPP/cap changes and appends its values with
``array.fromlist``. Instructions (callgrind, the whole ``simulate`` call of ResNet-18
x20, deterministic where the ratios move with the machine's load): 10 ms samples
460 M -> 421 M (-8.5%), 1 s samples 296 M -> 286 M (-3%); the part the 10 ms samples
add, 165 M -> 135 M (-18%). What is left per wake is the RC step (two ``dot`` and
the temperatures' add, peak, list), the active processor's integrals and leakage,
the sample's 26 values and the SimPy event, each a few microseconds of Python or
numpy call overhead; the ratio stays below 0.5 (see ``docs/engine.md``).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time

# The heavy imports (pandas, the engine) are made inside the functions: the peak
# RSS part runs first, in children of a still-small process, because Linux hands
# a parent's peak RSS down to a child it forks (ru_maxrss survives fork + exec).

# Throughput is timed in CPU seconds of this (single-threaded) process: on a shared
# machine wall time also counts the time spent waiting for a core.
_clock = time.process_time
RATIO_GOAL = 0.5  # engine kernels/s over raw SimPy steps/s
IMPORT_GOAL_S = 0.1  # ``import simulator`` (fresh interpreter, minus a bare one)
# Peak RSS "flat": from 2,000 to 20,000 iterations it grows by less than this fraction
# of the short run's (no record per kernel or per iteration is kept; the time series
# is bounded: simulator/engine/iterations.py, Device._halve)
RSS_GOAL_GROWTH = 0.10
# The throughput cases, in the order printed (``--only`` names one)
CASES = ("chain", "chains", "resnet18", "resnet18-1s")


def raw_simpy(n: int) -> float:
    """Seconds for ``n`` acquire + timeout + release steps in plain SimPy."""
    import simpy

    env = simpy.Environment()
    resource_ = simpy.Resource(env, capacity=1)

    def worker():
        for _ in range(n):
            with resource_.request() as request:
                yield request
                yield env.timeout(1e-4)

    env.process(worker())
    start = _clock()
    env.run()
    return _clock() - start


def chain_trace(n: int, width: int = 1):
    """``n`` small conv kernels: ``width`` independent chains."""
    import pandas as pd

    from simulator.trace import trace_from_table

    rows = []
    for i in range(n):
        dep = i - width
        rows.append({"id": i, "name": f"k{i}", "op": "conv", "pass": "fwd",
                     "precision": "fp32", "flops": 2e6, "bytes_in": 4e4, "bytes_out": 4e4,
                     "weight_bytes": 1e4, "deps": str(dep) if dep >= 0 else "",
                     "kernel": 3, "stride": 1})
    return trace_from_table(pd.DataFrame(rows))


def _spec(processor: str, cores: int, iterations: int, outputs: dict | None = None):
    from simulator.spec.experiment import ExperimentSpec

    raw = {"name": "bench", "soc": "snapdragon865",
           "workload": {"trace": "<memory>", "iterations": iterations},
           "policy": {"name": "single", "processor": processor, "cores": cores},
           "dvfs": {"governor": "schedutil"}, "thermal": {"governor": True}}
    if outputs:
        raw["outputs"] = outputs
    return ExperimentSpec.model_validate(raw)


def engine(trace, processor: str, cores: int, iterations: int = 1,
           outputs: dict | None = None) -> tuple[float, float]:
    """(seconds of the whole ``simulate`` call, seconds of its ``env.run``) for
    ``trace`` with power, DVFS and thermal on."""
    import simpy

    from simulator.engine.simulation import simulate

    spec = _spec(processor, cores, iterations, outputs)
    run_seconds = [0.0]
    original = simpy.Environment.run

    def timed_run(env, *args, **kwargs):
        begin = _clock()
        try:
            return original(env, *args, **kwargs)
        finally:
            run_seconds[0] += _clock() - begin

    simpy.Environment.run = timed_run
    try:
        start = _clock()
        simulate(spec, traces={0: trace})
        return _clock() - start, run_seconds[0]
    finally:
        simpy.Environment.run = original


def throughput(n: int, repeat: int, only: str | None = None) -> None:
    """Part 1: kernels/s and the ratio to raw SimPy, per case (all, or ``only``
    one of :data:`CASES`)."""
    from workloads.generate import generate_trace

    resnet = generate_trace("resnet18", mode="training", batch=8, input_size=32)
    repeats = max(1, n // len(resnet))
    # The default outputs sample the time series every 10 ms (the thermal step):
    # every step is then a sample, integrated and recorded. The shipped studies
    # sample every 50 ms-10 s; "1 s samples" is that case (schedutil still
    # decides every 10 ms, the trip governor polls every 250 ms).
    cases = {"chain, 1 core": (chain_trace(n), "cpu.gold", 1, 1, None),
             "4 chains, 3 cores": (chain_trace(n, width=4), "cpu.gold", 3, 1, None),
             f"resnet18 train x{repeats}": (resnet, "cpu.gold", 3, repeats, None),
             "  the same, 1 s samples": (resnet, "cpu.gold", 3, repeats,
                                         {"sample_period": "1 s"})}
    engine(*cases["chain, 1 core"])  # warm-up: imports, SoC cache
    for key, (label, (trace, proc, cores, iterations, outputs)) in zip(CASES, cases.items()):
        if only is not None and key != only:
            continue
        kernels = len(trace) * iterations
        # Raw SimPy and the engine alternate, best of ``repeat`` each, so that a
        # change in the machine's load moves both sides of the ratio alike.
        raws, runs = [], []
        for _ in range(repeat):
            raws.append(raw_simpy(n))
            runs.append(engine(trace, proc, cores, iterations, outputs))
        raw = min(raws)
        best = min(runs, key=lambda pair: pair[0])
        ratio = (kernels / best[0]) / (n / raw)
        run_ratio = (kernels / min(r[1] for r in runs)) / (n / raw)
        verdict = "ok" if ratio >= RATIO_GOAL else "below goal"
        print(f"{label:22s}: engine {kernels / best[0]:8,.0f} kernels/s, raw SimPy "
              f"{n / raw:8,.0f} steps/s, ratio {ratio:.2f} (goal >= {RATIO_GOAL}: "
              f"{verdict}); run phase alone: ratio {run_ratio:.2f}, build + collect "
              f"{best[0] - best[1]:.2f} s")


def _fresh(code: str, repeat: int) -> float:
    """Best CPU seconds (user + system) of ``python -c code`` in a fresh interpreter."""
    best = float("inf")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.DEVNULL)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        best = min(best, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return best


def import_time(repeat: int) -> None:
    """Part 2: start-up costs, net of a bare interpreter's."""
    bare = _fresh("pass", repeat)
    rows = {"import simulator": "import simulator",
            "socsim --help": "import sys; sys.argv = ['socsim', '--help']\n"
                             "from simulator.cli import main\n"
                             "try:\n    main()\nexcept SystemExit:\n    pass",
            "worker (simulation + policies)": "import simulator.engine.simulation, policies"}
    print(f"bare interpreter: {bare:.2f} s (subtracted below)")
    for label, code in rows.items():
        net = _fresh(code, repeat) - bare
        goal = (f"(goal < {IMPORT_GOAL_S} s: "
                f"{'ok' if net < IMPORT_GOAL_S else 'above goal'})"
                if label != "worker (simulation + policies)" else
                "(pandas, numpy, scipy.linalg, pydantic, simpy: what a run needs)")
        print(f"{label:32s}: {net:5.2f} s {goal}")


def _rss_child(iterations: int) -> None:
    """Run a 5-kernel chain ``iterations`` times writing no per-kernel output and
    print the process's peak RSS (MB) and the kernel count."""
    from simulator.engine.simulation import simulate

    spec = _spec("cpu.gold", 1, iterations, {"kernels": False, "timeline": False})
    result = simulate(spec, traces={0: chain_trace(5)})
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux
    print(f"{peak:.1f} {int(result.metrics['kernels'])}")


def peak_rss() -> None:
    """Part 3: peak RSS of short and long runs (fresh processes)."""
    figures = {}
    for iterations in (2_000, 20_000):
        out = subprocess.run([sys.executable, __file__, "--rss-child", str(iterations)],
                             check=True, capture_output=True, text=True,
                             env=dict(os.environ)).stdout.split()
        figures[iterations] = float(out[0])
        print(f"peak RSS, {iterations:6,d} iterations ({int(out[1]):7,d} kernels, outputs "
              f"without kernels/timeline): {figures[iterations]:6.1f} MB")
    growth = figures[20_000] - figures[2_000]
    fraction = growth / figures[2_000]
    print(f"growth: {growth:.1f} MB, {fraction:.0%} of the short run's, "
          f"{growth * 2**20 / 18_000:,.0f} B per extra iteration (goal: flat, < "
          f"{RSS_GOAL_GROWTH:.0%}: {'ok' if fraction < RSS_GOAL_GROWTH else 'above goal'})")


def flame(case: str, kernels: int, folded: str, top: int = 25) -> None:
    """Sample one throughput case with py-spy (a sampling profiler: a few percent
    of overhead where cProfile's per-call hooks double a run) and print the share
    of the run phase (``Environment.run``) each function takes, with its callees
    (inclusive) and alone (own). ``folded`` gets py-spy's folded stacks: one
    ``frame;frame;... count`` line per stack, the input of any flame-graph viewer
    (``flamegraph.pl``, speedscope)."""
    from collections import Counter

    command = ["py-spy", "record", "--rate", "1000", "--format", "raw", "--output", folded,
               "--", sys.executable, __file__, "--only", case, "--repeat", "3",
               "--kernels", str(kernels)]
    try:
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    except FileNotFoundError:
        sys.exit("engine.py: --flame needs py-spy (pip install py-spy)")
    inclusive, own, total = Counter(), Counter(), 0
    with open(folded) as lines:
        for line in lines:
            stack, count = line.rsplit(" ", 1)
            frames = stack.split(";")
            # the engine's run phase down ("Environment.run (simpy/core.py:254)"
            # inside ``simulate``; not the raw SimPy loop's)
            roots = [i for i, frame in enumerate(frames) if frame.startswith("Environment.run ")]
            if not roots or not any(frame.startswith("simulate ") for frame in frames):
                continue
            # a function, not a line: "name (file:line)" -> "name (file)"
            names = [frame.rsplit(":", 1)[0] + ")" for frame in frames[roots[0]:]]
            total += int(count)
            for name in set(names):
                inclusive[name] += int(count)
            own[names[-1]] += int(count)
    if total == 0:
        sys.exit(f"engine.py: py-spy caught no sample of the run phase (see {folded})")
    print(f"{case}: {total} samples in the run phase (folded stacks: {folded})")
    print(f"{'inclusive':>9s} {'own':>6s}  function")
    for name, count in inclusive.most_common(top):
        print(f"{count / total:9.1%} {own[name] / total:6.1%}  {name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-import", action="store_true")
    parser.add_argument("--skip-rss", action="store_true")
    parser.add_argument("--only", choices=CASES,
                        help="one throughput case (implies --skip-import --skip-rss)")
    parser.add_argument("--flame", metavar="FILE",
                        help="sample the --only case with py-spy (pip install py-spy), "
                             "write its folded stacks to FILE and print where its run "
                             "phase goes")
    parser.add_argument("--rss-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rss_child:
        _rss_child(args.rss_child)
        return
    if args.flame:
        if args.only is None:
            parser.error("--flame needs --only CASE")
        flame(args.only, args.kernels, args.flame)
        return
    if not args.skip_rss and args.only is None:
        peak_rss()  # first: see the note on imports above
    if not args.skip_import and args.only is None:
        import_time(args.repeat)
    throughput(args.kernels, args.repeat, args.only)


if __name__ == "__main__":
    main()
