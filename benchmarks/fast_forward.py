"""Fast-forward against full kernel-level simulation, and the 150-epoch runs it buys.

1. **Accuracy.** A shorter version of the 150-epoch run (VGG-11 on CIFAR-10, batch
   64, SD888, CPU at maximum frequency, thermal governor on: the big cores
   throttle) is simulated with and without ``fast_forward``; the script prints
   the simulated time, energy, peak temperature and wall time of both and their
   differences, next to the goal (within 1 %). With ``--policy mnn-int8
   --batches 4000`` the big cores settle into a thermal limit cycle (caps
   stepping around the trip, ~700 s a period) that fast-forward leaps over
   (:mod:`simulator.engine.limit_cycle`); the script prints how much it skipped.
2. **Long horizons** (``--convergence``): every run of
   ``experiments/mandheling/convergence.yaml`` (150 epochs, ~117 k batches, with
   fast-forward), each in a fresh process: its wall and CPU seconds next to the
   goal (under 60 s of wall time; the CPU time is what the machine's load does
   not change) and its peak RSS, next to the same run cut to 15 epochs: the
   peak should be flat in the number of batches (no per-kernel record is kept
   when none is asked for).
3. **Memory** (``--memory``, issue 21 goal 5): the peak RSS of three runs of
   ``convergence.yaml`` (VGG-11 and ResNet-18 MNN-FP32, ResNet-18 Mandheling)
   cut to 15 epochs and at the full 150 (10x the batches), each in a fresh
   process started from this small one (Linux hands a parent's peak RSS down to
   a child), next to the goal: growth under 10 % of the short run's; and the
   first of them at 300 epochs, where the time series has reached its bound.
   Then one multi-tenant run (NestDNN, 6 apps for 60 s, ~750 k kernels) with and
   without kernel outputs: without, it should keep no kernel record.

4. **Pipelines** (``--pipeline``, issue 21 goal 2: "DynO pipelines"): DynO's
   set-up of ``experiments/dyno/06-dynamic-bandwidth.yaml`` (ResNet-152, Jetson AGX
   Xavier GPU client, desktop GPU server, 8 frames in flight, DynO re-deciding the
   split), once over a constant 20 Mbit/s, 5 ms link and once over the experiment's
   Wi-Fi/4G/3G trace (a change every 10 s), each with and without ``fast_forward``
   (:mod:`simulator.engine.pipeline`): throughput, makespan, energy per device and
   peak temperature of both next to the 1 % goal, the frames held and the wall time.

5. **Tenants** (``--tenants [RUN ...]``): jobs sharing a device (NestDNN's six apps
   on the SD835's big cores, points of ``experiments/nestdnn/alpha-sweep.yaml``), at
   kernel level and with ``fast_forward`` (:mod:`simulator.engine.tenant`): the
   policy's frame rates, latency, accuracy gain, energy and temperature of both next
   to the 1 % goal, the frames held and the CPU time.

With ``--inference --batches 20000`` the same comparison runs inference frames
(ResNet-18, batch 1, on the SD888's gold cores held at their top OPP until the trip
governor caps them): fast-forward is not specific to training.

Run: ``python benchmarks/fast_forward.py [--batches 1500] [--policy mnn-fp32]
[--inference] [--convergence] [--only-convergence] [--memory]
[--pipeline [--seconds 50]] [--tenants [RUN ...]]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path


def run(batches: int, policy: str, fast_forward: bool,
        model: str = "vgg11") -> tuple[dict, float]:
    """(metrics, wall seconds) of one run; with fast-forward the metrics also hold
    ``leaps`` and ``leaped_s`` (limit-cycle periods skipped, simulated s)."""
    from simulator.spec.experiment import ExperimentSpec

    options = {"batch_norm": False} if model.startswith("vgg") else {}
    params = {"name": policy, "cpu_freq": "max"}
    if policy == "mandheling":
        params["start_batch"] = 0
    exp = ExperimentSpec.model_validate({
        "name": "ff-bench", "soc": "snapdragon888",
        "workload": {"model": model, "mode": "training", "batch": 64, "input_size": 32,
                     "num_classes": 10, "options": options,
                     "batches": batches, "fast_forward": fast_forward},
        "policy": params,
        "outputs": {"timeline": False, "kernels": False, "sample_period": "10 s"}})
    return _simulate(exp)


def run_inference(frames: int, model: str, fast_forward: bool) -> tuple[dict, float]:
    """(metrics, wall seconds) of ``frames`` inference frames of ``model`` (batch 1,
    224 px) back to back on the SD888's gold cores at their top OPP (``performance``:
    the cores heat until the trip governor caps them), thermal governor on."""
    from simulator.spec.experiment import ExperimentSpec

    exp = ExperimentSpec.model_validate({
        "name": "ff-bench-inference", "soc": "snapdragon888",
        "workload": {"model": model, "mode": "inference", "batch": 1,
                     "iterations": frames, "fast_forward": fast_forward},
        "policy": {"name": "single", "processor": "cpu.gold"},
        "dvfs": {"governor": "performance"}, "thermal": {"governor": True},
        "outputs": {"timeline": False, "kernels": False, "sample_period": "1 s"}})
    return _simulate(exp)


DYNO = Path(__file__).resolve().parent.parent / "experiments/dyno"


def run_pipeline(link: dict, seconds: float, fast_forward: bool) -> tuple[dict, float]:
    """(metrics, wall seconds) of DynO's pipelined ResNet-152 (the set-up of
    experiments/dyno/06-dynamic-bandwidth.yaml, its ``dyno`` point) over ``link``."""
    from simulator.spec.experiment import ExperimentSpec

    exp = ExperimentSpec.model_validate({
        "name": "ff-pipeline", "soc": "jetson-agx-xavier",
        "devices": {"server": {"soc": "desktop-i7-1080ti"}},
        "links": [{"between": ["device", "server"], "radio": "none", **link}],
        "workload": {"model": "resnet152", "iterations": 100000, "max_in_flight": 8,
                     "name": "dyno", "fast_forward": fast_forward},
        "policy": {"name": "dyno", "client": "gpu",
                   "constraints": [{"metric": "accuracy_drop", "max": 1.0}],
                   "targets": [{"metric": "throughput", "goal": "max"},
                               {"metric": "server_cost", "goal": "min"}]},
        "dvfs": {"governor": "performance"},
        "outputs": {"timeline": False, "kernels": False, "sample_period": "1 s"},
        "time_limit": f"{seconds} s", "seed": 0})
    return _simulate(exp, DYNO)


def _simulate(exp, base: Path | None = None) -> tuple[dict, float]:
    """(metrics, wall seconds) of one run of ``exp``; with fast-forward the metrics
    also hold ``leaps`` and ``leaped_s`` (one device: limit-cycle periods skipped,
    simulated s) or ``holds`` and ``held_s`` (a pipeline), and ``frames``."""
    from simulator.engine.simulation import Simulation

    start = time.perf_counter()
    sim = Simulation(exp, base=base).build().plan().run()
    metrics = sim.collect().metrics
    wall = time.perf_counter() - start
    metrics["frames"] = len(sim.runners[0].iteration_times)
    ff, forward = sim.runners[0].fast_forward, sim.runners[0].pipeline
    if ff is not None:
        metrics["leaps"], metrics["leaped_s"] = ff.leaps, ff.leaped
    if forward is not None:
        metrics["holds"], metrics["held_s"] = forward.holds, forward.held_s
    return metrics, wall


def pipeline(seconds: float) -> None:
    """Print kernel level against fast-forward for the two links of --pipeline."""
    links = {"constant 20 Mbit/s, 5 ms": {"bandwidth": "20 Mbit/s", "latency": "5 ms"},
             "Wi-Fi/4G/3G trace (06)": {"trace": "traces/wifi-4g-3g.csv"}}
    for label, link in links.items():
        exact, exact_wall = run_pipeline(link, seconds, False)
        fast, fast_wall = run_pipeline(link, seconds, True)
        print(f"DynO ResNet-152 pipeline (8 in flight), {label}, {seconds:g} s")
        # the run's, then DynO's per-frame means from the kernel and transfer records
        # (held frames get their template's: simulator.engine.pipeline._Echo)
        _against(("throughput_per_s", "makespan_s", "device.energy_j", "server.energy_j",
                  "energy_j", "peak_temp_c", "device.peak_skin_temp_c",
                  "server.peak_skin_temp_c", "stage_client_s", "stage_transfer_s",
                  "stage_server_s", "uplink_bytes", "energy_compute_per_inference_j",
                  "energy_client_per_inference_j"), fast, exact, width=30, decimals=3)
        print(f"  held                           {fast['replayed_iterations']:.0f} of "
              f"{fast['frames']:.0f} frames in {fast['holds']} holds, {fast['held_s']:.1f} of "
              f"{fast['makespan_s']:.0f} simulated s")
        print(f"  wall time                      kernel level {exact_wall:.1f} s   fast-forward "
              f"{fast_wall:.1f} s   ({exact_wall / fast_wall:.1f}x)")


def tenants(points: list[int]) -> None:
    """Print kernel level against fast-forward for points of NestDNN's alpha sweep
    (6 apps sharing the SD835's big cores, a 60 s lifecycle): jobs sharing their
    device hold their steady frames (:mod:`simulator.engine.tenant`)."""
    import yaml

    from simulator.engine.simulation import Simulation
    from simulator.experiment.expand import expand
    from simulator.spec.experiment import ExperimentSpec

    path = TENANTS[0]
    for index in points:
        runs = {}
        for fast_forward in (False, True):
            raw = yaml.safe_load(path.read_text())
            for workload in raw["workload"]:
                workload["fast_forward"] = fast_forward
            spec = expand(raw)[index]
            exp = ExperimentSpec.model_validate(spec.config)
            Simulation(exp, spec.seed).build()  # warm: the policy's profiles, the SoC
            cpu = time.process_time()
            sim = Simulation(exp, spec.seed).build().plan().run()
            metrics = sim.collect().metrics
            runs[fast_forward] = (metrics, time.process_time() - cpu, sim.runners)
        (exact, exact_cpu, _), (fast, fast_cpu, runners) = runs[False], runs[True]
        policy = spec.config["policy"]
        print(f"{path.name} run {index} ({policy['name']}, alpha {policy['alpha']}, "
              f"lifecycle seed {policy['lifecycle']['seed']}; {len(runners)} apps, 60 s)")
        _against(("inferences", "frame_rate_fps", "relative_frame_rate", "frame_latency_s",
                  "accuracy_gain_pct", "energy_j", "energy_dram_j", "energy_per_inference_j",
                  "peak_temp_c", "min_freq_cpu.big_hz"), fast, exact, width=24, decimals=5)
        print(f"  held                     {fast['replayed_iterations']:.0f} of "
              f"{fast['inferences']:.0f} frames ({sum(r.tenant.cuts for r in runners)} cut "
              f"part-way); kernels {exact['kernels'] / 1e3:.0f} k -> "
              f"{fast['kernels'] / 1e3:.0f} k")
        print(f"  CPU time                 kernel level {exact_cpu:.2f} s   fast-forward "
              f"{fast_cpu:.2f} s   ({exact_cpu / fast_cpu:.1f}x)")


def _against(metrics, fast: dict, exact: dict, width: int, decimals: int) -> None:
    """Print each of ``metrics`` that kernel level has, fast-forward's next to it and
    their difference against the goal."""
    for metric in metrics:
        if metric not in exact:
            continue
        diff = _percent(fast[metric], exact[metric])
        verdict = "ok" if abs(diff) <= ACCURACY_GOAL_PCT else "outside"
        print(f"  {metric:{width}s} kernel level {exact[metric]:12.6g}   fast-forward "
              f"{fast[metric]:12.6g}   ({diff:+.{decimals}f} %)  goal within "
              f"{ACCURACY_GOAL_PCT:g} %: {verdict}")


def _percent(fast: float, exact: float) -> float:
    """``fast``'s difference from ``exact`` in % (0 when both are 0, e.g. no uplink)."""
    return 100 * (fast - exact) / exact if exact else (0.0 if fast == exact else float("inf"))


ACCURACY_GOAL_PCT = 1.0  # fast-forward within this of kernel level (time, energy)
WALL_GOAL_S = 60.0  # one 150-epoch run of convergence.yaml
RSS_GOAL_GROWTH = 0.10  # peak RSS, 15 -> 150 epochs
# The runs of convergence.yaml whose memory --memory measures (by description)
MEMORY_RUNS = ("VGG-11 MNN-FP32", "ResNet-18 MNN-FP32", "ResNet-18 Mandheling")
CONVERGENCE = Path(__file__).resolve().parent.parent / "experiments/mandheling/convergence.yaml"


def _convergence_child(index: int, epochs: int | None) -> None:
    """Run one point of convergence.yaml (optionally cut to ``epochs``) and print
    a JSON line: wall s, CPU s, peak RSS MB, makespan, energy."""
    import yaml

    from simulator.engine.simulation import Simulation
    from simulator.experiment.expand import expand
    from simulator.spec.experiment import ExperimentSpec

    raw = yaml.safe_load(CONVERGENCE.read_text())
    if epochs is not None:
        raw["workload"]["epochs"] = epochs
    spec = expand(raw)[index]
    exp = ExperimentSpec.model_validate(spec.config)
    wall, cpu = time.perf_counter(), time.process_time()
    sim = Simulation(exp, spec.seed).build().plan().run()
    result = sim.collect()
    metrics = result.metrics
    ff = sim.runners[0].fast_forward
    print(json.dumps({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu,
                      "series": len(result.timeseries),
                      "leaps": ff.leaps, "leaped": ff.leaped,
                      "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "name": spec.config.get("description", str(index)),
                      "makespan": metrics["makespan_s"], "energy": metrics["energy_j"]}))


# A multi-tenant point (issue 21 goal 5 beyond training): NestDNN's alpha sweep, 6 apps
# sharing the SD835's big cores for 60 s, ~750 k kernels and ~10 k frames, written
# without kernel records; its policy's metrics read every frame, no kernel
TENANTS = (Path(__file__).resolve().parent.parent / "experiments/nestdnn/alpha-sweep.yaml", 51)


def _tenants_child(kernels: bool) -> None:
    """Run :data:`TENANTS` with ``outputs.kernels`` as given and print a JSON line:
    CPU s, peak RSS MB, kernels run and kernel records kept."""
    import yaml

    from simulator.engine.simulation import Simulation
    from simulator.experiment.expand import expand
    from simulator.spec.experiment import ExperimentSpec

    path, index = TENANTS
    raw = yaml.safe_load(path.read_text())
    raw["outputs"]["kernels"] = kernels
    for workload in raw["workload"]:  # every kernel run (the study fast-forwards them)
        workload["fast_forward"] = False
    spec = expand(raw)[index]
    cpu = time.process_time()
    sim = Simulation(ExperimentSpec.model_validate(spec.config), spec.seed).build().plan().run()
    metrics = sim.collect().metrics
    print(json.dumps({"cpu": time.process_time() - cpu, "kernels": metrics["kernels"],
                      "records": len(sim.recorder.tasks),
                      "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def _child(index: int, epochs: int | None) -> dict:
    command = [sys.executable, __file__, "--child", str(index)]
    if epochs is not None:
        command += ["--epochs", str(epochs)]
    return _fresh(command)


def _fresh(command: list[str]) -> dict:
    """The JSON line a child process prints last."""
    out = subprocess.run(command, check=True, capture_output=True, text=True,
                         env=dict(os.environ)).stdout
    return json.loads(out.strip().splitlines()[-1])


def convergence() -> None:
    """Part 2: every 150-epoch run, wall/CPU time and peak RSS (fresh processes)."""
    import yaml

    from simulator.experiment.expand import expand

    runs = len(expand(yaml.safe_load(CONVERGENCE.read_text())))
    print(f"\n{CONVERGENCE.name}: {runs} runs of 150 epochs (load average "
          f"{os.getloadavg()[0]:.1f} at the start)")
    worst = 0.0
    for index in range(runs):
        full, short = _child(index, None), _child(index, 15)
        growth = (full["rss"] - short["rss"]) / short["rss"]
        worst = max(worst, full["wall"])
        print(f"  {full['name']:32s} wall {full['wall']:6.1f} s  CPU {full['cpu']:6.1f} s "
              f"(goal < {WALL_GOAL_S:g} s: {'ok' if full['wall'] < WALL_GOAL_S else 'above'})"
              f"  peak RSS {full['rss']:5.0f} MB (15 epochs {short['rss']:5.0f} MB, "
              f"{growth:+.0%}; goal flat, < {RSS_GOAL_GROWTH:.0%}: "
              f"{'ok' if growth < RSS_GOAL_GROWTH else 'above'}); {full['leaps']} leaps "
              f"skipped {full['leaped'] / full['makespan']:.0%} of the simulated time")
    print(f"  slowest run: {worst:.1f} s of wall time (goal < {WALL_GOAL_S:g} s; on a "
          f"shared machine wall time also counts waiting for a core)")


def memory() -> None:
    """Part 3: peak RSS of 15 and 150 epochs of three runs (fresh processes)."""
    import yaml

    raw = yaml.safe_load(CONVERGENCE.read_text())
    descriptions = raw["sweep"]["zip"]["description"]
    print(f"\npeak RSS, {CONVERGENCE.name} cut to 15 epochs and at 150 (10x the batches; "
          f"outputs {raw['outputs']}):")
    fulls = {}
    for name in MEMORY_RUNS:
        index = next(i for i, d in enumerate(descriptions) if d.startswith(name))
        short, full = _child(index, 15), _child(index, None)
        fulls[name] = index, full
        growth = (full["rss"] - short["rss"]) / short["rss"]
        print(f"  {name:22s} 15 epochs {short['rss']:5.0f} MB   150 epochs "
              f"{full['rss']:5.0f} MB   ({growth:+.1%}; goal flat, < "
              f"{RSS_GOAL_GROWTH:.0%}: {'ok' if growth < RSS_GOAL_GROWTH else 'above'})"
              f"  time series {short.get('series', 0) / 1e3:.0f} k -> "
              f"{full.get('series', 0) / 1e3:.0f} k values")
    print("  (what grows is the time series the outputs ask for, up to its bound of "
          "2^14 samples a device: ~26 values each, 45 h at 10 s; with Mandheling also "
          "fast-forward's records and schedules of its skipped-row sets, ~540 in 15 "
          "epochs and ~650 in 150)")
    # past the bound the series is halved in place: twice the batches, the same peak
    name = MEMORY_RUNS[0]
    index, full = fulls[name]
    double = _child(index, 300)
    growth = (double["rss"] - full["rss"]) / full["rss"]
    print(f"  {name:22s} 150 epochs {full['rss']:5.0f} MB   300 epochs {double['rss']:5.0f} MB"
          f"   ({growth:+.1%}: the series at its bound)  time series "
          f"{full.get('series', 0) / 1e3:.0f} k -> {double.get('series', 0) / 1e3:.0f} k values")
    # Several jobs on one device: the records nobody asked for are not kept either
    path, index = TENANTS
    lean, kept = (_fresh([sys.executable, __file__, "--tenants-child", flag])
                  for flag in ("lean", "kept"))
    print(f"\npeak RSS, {path.name} run {index} (6 apps, 60 s, {lean['kernels'] / 1e3:.0f} k "
          f"kernels): outputs without kernels {lean['rss']:5.0f} MB, {lean['cpu']:.1f} CPU s "
          f"({lean['records']:,} kernel records kept; goal: none); with kernels "
          f"{kept['rss']:5.0f} MB, {kept['cpu']:.1f} CPU s ({kept['records'] / 1e3:.0f} k)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=1500)
    parser.add_argument("--policy", default="mnn-fp32")
    parser.add_argument("--model", default="vgg11", help="a zoo model trained on "
                        "CIFAR-10 (e.g. resnet18)")
    parser.add_argument("--inference", action="store_true",
                        help="inference frames (batch 1, 224 px; --model, default "
                        "resnet18; --batches counts frames) instead of training batches")
    parser.add_argument("--convergence", action="store_true",
                        help="also time every 150-epoch run of convergence.yaml")
    parser.add_argument("--only-convergence", action="store_true")
    parser.add_argument("--memory", action="store_true",
                        help="only the peak RSS of 15 vs 150 epochs (three runs)")
    parser.add_argument("--pipeline", action="store_true",
                        help="only DynO's pipelined ResNet-152, constant link and trace")
    parser.add_argument("--seconds", type=float, default=50.0,
                        help="simulated seconds of each --pipeline run")
    parser.add_argument("--tenants", type=int, nargs="*", metavar="RUN",
                        help="only jobs sharing a device: points of NestDNN's alpha sweep "
                        "(default runs 0 51 70) at kernel level and fast-forwarded")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--tenants-child", choices=["lean", "kept"], help=argparse.SUPPRESS)
    parser.add_argument("--epochs", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        _convergence_child(args.child, args.epochs)
        return
    if args.tenants_child:
        _tenants_child(args.tenants_child == "kept")
        return
    if args.only_convergence:
        convergence()
        return
    if args.memory:
        memory()
        return
    if args.pipeline:
        pipeline(args.seconds)
        return
    if args.tenants is not None:
        tenants(args.tenants or [0, 51, 70])
        return
    if args.inference:
        model = args.model if args.model != "vgg11" else "resnet18"
        exact, exact_wall = run_inference(args.batches, model, False)
        fast, fast_wall = run_inference(args.batches, model, True)
        print(f"{model} inference, {args.batches} frames on SD888's gold cores")
    else:
        exact, exact_wall = run(args.batches, args.policy, False, args.model)
        fast, fast_wall = run(args.batches, args.policy, True, args.model)
        print(f"{args.policy}, {args.model}, {args.batches} batches on SD888")
    for metric in ("makespan_s", "energy_j", "peak_temp_c", "min_freq_cpu.gold_hz"):
        diff = _percent(fast[metric], exact[metric])
        goal = (f"  goal within {ACCURACY_GOAL_PCT:g} %: "
                f"{'ok' if abs(diff) <= ACCURACY_GOAL_PCT else 'outside'}"
                if metric in ("makespan_s", "energy_j") else "")
        print(f"  {metric:22s} kernel level {exact[metric]:12.4g}   fast-forward "
              f"{fast[metric]:12.4g}   ({diff:+.2f} %){goal}")
    print(f"  replayed iterations    {fast['replayed_iterations']:.0f} of {args.batches}; "
          f"{fast['leaps']} leaps over whole periods of a limit cycle skipped "
          f"{fast['leaped_s']:.0f} of {fast['makespan_s']:.0f} simulated s")
    print(f"  wall time              kernel level {exact_wall:.1f} s   fast-forward "
          f"{fast_wall:.1f} s   ({exact_wall / fast_wall:.1f}x)")
    if args.convergence:
        convergence()


if __name__ == "__main__":
    main()
