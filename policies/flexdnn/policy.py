"""``flexdnn``: content-adaptive early-exit inference (Fang et al., SEC'20).

The workload with early exits (``model: early_exit``) runs on one processor,
one operator at a time; each frame draws a difficulty
(:mod:`workloads.early_exit.difficulty`) and leaves at the first inserted exit
whose confidence reaches its threshold: the kernels after that point do not
run (``Plan.skip``). ``exits`` chooses the plan:

* ``greedy``: FlexDNN's insertion plan by exit quality, profiled on the first
  ``profile_frames`` frames with every kernel's simulated time as its cost;
* ``branchynet``: a BranchyNet-style baseline (Teerapittayanon et al., ICPR'16,
  the early-exit design FlexDNN is compared with): fixed exits at the end of
  every resolution stage of the backbone (where the feature map shrinks next,
  not the last), each of the model's first exit design, no quality-based plan;
* ``all`` / ``none`` (the one-size-fits-all model: the backbone alone) / a
  list of exit indices.

When the model offers several exit designs per position (``heads``),
``greedy`` and ``all`` first pick each position's design by exit quality
(:func:`~workloads.early_exit.plan.choose_designs`: FlexDNN's exits are
chosen per position, not one fixed head). An exit's capability grows with
the computation a frame has had when it decides: the backbone before it plus
``head_efficacy`` times its own branch (0: the branch's work adds nothing,
so every design is as capable and the cheapest wins; an assumption, see
:mod:`workloads.early_exit.difficulty`).

Run-time adaptation (``adapt: true``): the configurations are depth caps: no
cap, or "leave at exit ``k`` at the latest" for each inserted exit ``k``
(frames that would go deeper are forced out there, right only if that exit
recognises them). An accuracy-resource profile, measured on the profiling
frames, gives each configuration's expected compute per frame and accuracy.
(Relaxing the exit thresholds is the other knob, ``relax``; with the
capability model it saves little compute per accuracy point lost, so the
adaptation does not use it.) After every frame the policy compares the observed frame
latency (smoothed) with the profile's compute for the current level: their
ratio is the slowdown the other apps and the free resources impose. It then
picks the most accurate configuration whose compute (its
``deadline_quantile`` over the profiled frames), slowed down alike, meets the
frame deadline (``1 / camera_fps``), among the levels losing at most
``max_accuracy_loss`` points (the cheapest of them when none meets it).
Free resources change with ``shares`` (the share of the processor the job
gets over time); other workloads of the experiment run alongside on the same
processor (competing load).

Metrics of the early-exit job: ``frames``, ``accuracy_pct``,
``compute_per_frame_s`` (kernel time per frame alone at the top OPP),
``flops_per_frame``, ``early_exit_pct`` (frames leaving before the end),
``frame_latency_p10_s`` ... ``p99_s``, ``frame_latency_mean_s``,
``deadline_miss_pct`` (frames slower than ``1 / camera_fps``),
``energy_per_frame_j``, ``exits_inserted``, ``forced_exit_pct`` (frames a depth
cap forced out), ``adaptations``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import numpy as np
from pydantic import AfterValidator, Field

from simulator.errors import ConfigError
from simulator.params import PositiveFloat, PositiveInt, to_quantity
from simulator.policy import POLICIES, Job, Placement, Plan, Policy
from workloads.early_exit.difficulty import (
    DifficultyProcess,
    capability,
    exit_confidence,
    load_difficulty_trace,
    threshold,
)
from workloads.early_exit.plan import (
    FINAL,
    choose_designs,
    exit_costs,
    exit_structure,
    exits_taken,
    frame_costs,
    insertion_plan,
    positions,
    stage_ends,
)

from ..split import serialize

PERCENTILES = (10, 50, 90, 99)


def _share(entry: list) -> list:
    """``[time, share]``: from ``time`` on the job gets ``share`` in (0, 1] of the processor."""
    try:
        when, share = entry
        when, fraction = to_quantity(when, "time"), float(share)
    except (TypeError, ValueError) as err:
        raise ValueError(f"each entry is [time, share] like ['10 s', 0.5]: {err}") from None
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"a share must be in (0, 1]; got {share!r}")
    return [when, share]


Probability = Annotated[float, Field(gt=0, le=1)]
Share = Annotated[list[Any], AfterValidator(_share)]


@POLICIES.register("flexdnn")
class FlexDNN(Policy):
    """Early-exit inference with FlexDNN's insertion plan and run-time adaptation.

    Args:
        processor: where every kernel runs; cores: units (all if None).
        exits: ``greedy``, ``branchynet``, ``all``, ``none`` or a list of exit indices.
        accuracy: top-1 accuracy of the full model (share of frames it recognises).
        depth_exponent: ``kappa`` of an exit's capability ``accuracy * depth^kappa``.
        head_efficacy: how much of an exit branch's own computation counts towards
            its depth (``depth = (backbone before it + head_efficacy * branch) /
            backbone``, at most 1).
        correlation: frame-to-frame correlation of the video's difficulty.
        video_seed: seed of the video's difficulty process, so that runs of other
            configurations see the same video; None draws it from the run's generator.
        difficulty: path to a per-frame difficulty trace (CSV) replacing the process.
        slope: sharpness of an exit's softmax around its capability (confidence model).
        relax: threshold relaxation (difficulty units): frames up to ``relax``
            harder than an exit recognises leave there too.
        adapt: pick a depth cap at run time to meet the frame deadline.
        camera_fps: frames per second of the camera (None: frames back to back).
        profile_frames: frames used to profile exits and the accuracy-resource profile.
        smoothing: weight of the newest frame in the smoothed frame latency.
        deadline_quantile: share of the profiled frames whose compute must meet the
            deadline for a configuration to be chosen.
        max_accuracy_loss: adaptation never picks a configuration whose profiled
            accuracy is more than this many points below the uncapped one.
        shares: ``[[time, share], ...]``: the share of the processor the early-exit job
            gets from each time on (``[["0 s", 1.0], ["10 s", 0.4]]``; free
            resources changing as other apps come and go); None: the whole of it.
    """

    name = "flexdnn"
    conformance = {"params": {"processor": "cpu.gold", "profile_frames": 200},
                   "workload": {"model": "early_exit", "input_size": 32, "num_classes": 10}}
    # its metrics are its frames' exits and latencies and the run's energy: no
    # kernel record
    metrics_read_records = False
    metrics_read_iterations = True

    def __init__(self, processor: str = "cpu.big", cores: PositiveInt | None = None,
                 exits: Literal["greedy", "branchynet", "all", "none"] | list[int] = "greedy",
                 accuracy: Probability = 0.8, depth_exponent: float = 1.0,
                 head_efficacy: Annotated[float, Field(ge=0)] = 0.0,
                 correlation: float = 0.9, video_seed: int | None = None,
                 difficulty: str | None = None, slope: float = 20.0, relax: float = 0.0,
                 adapt: bool = False, camera_fps: PositiveFloat | None = None,
                 profile_frames: int = 2000, smoothing: float = 0.3,
                 deadline_quantile: Probability = 0.9, max_accuracy_loss: float = 5.0,
                 shares: list[Share] | None = None):
        if adapt and camera_fps is None:
            raise ConfigError("adapt needs camera_fps (its frame deadline)", path="adapt")
        self.processor = processor
        self.cores = cores
        self.exits = exits
        self.accuracy = accuracy
        self.depth_exponent = depth_exponent
        self.head_efficacy = head_efficacy
        self.correlation = correlation
        self.video_seed = video_seed
        self.difficulty = difficulty
        self.slope = slope
        self.relax = relax
        self.adapt = adapt
        self.camera_fps = camera_fps
        self.profile_frames = profile_frames
        self.smoothing = smoothing
        self.deadline_quantile = deadline_quantile
        self.max_accuracy_loss = max_accuracy_loss
        self.shares = shares
        self._shares = [(float(when), float(share)) for when, share in shares or []]
        if [t for t, _ in self._shares] != sorted(t for t, _ in self._shares):
            raise ConfigError("share times must ascend", path="shares")
        self._job: str | None = None

    def bind(self, context) -> None:
        super().bind(context)
        context.require_processor(self.processor)
        trace = load_difficulty_trace(self.difficulty) if self.difficulty else None
        rng = (context.rng.spawn(2) if self.video_seed is None
               else np.random.default_rng(self.video_seed).spawn(2))
        self._video = DifficultyProcess(rng[0], self.correlation, trace)
        self._profiling = DifficultyProcess(rng[1], self.correlation, trace).sample(
            self.profile_frames)
        context.start(self._start())

    # -- planning ------------------------------------------------------------
    def plan(self, job: Job) -> Plan:
        spec = self.context.processors()[self.processor]
        units = spec.units if self.cores is None else self.cores
        trace = serialize(job.trace)
        placements = [Placement(self.processor, units)] * len(trace)
        structure = exit_structure(trace)
        if not structure.heads:
            return Plan(placements, trace=trace)  # competing load
        if self._job is not None:
            raise ConfigError("flexdnn runs one early-exit workload; got a second one "
                              f"({job.name!r})")
        self._job = job.name
        self.structure = structure
        row_time = [self.context.duration(job, row, self.processor, units)
                    for row in range(len(trace))] if trace is job.trace else \
            self._row_times(trace, units)
        self.costs = exit_costs(structure, row_time)
        self.flop_costs = exit_costs(structure, trace.table["flops"].tolist())
        classes = int(trace.table["out_channels"].iloc[-1]) or 2
        self.classes = max(2, classes)
        total = self.costs.total
        self.q = {j: float(capability(
            (self.costs.prefix[j] + self.head_efficacy * self.costs.head[j]) / total
            if total > 0 else 0.0, self.accuracy, self.depth_exponent))
            for j in structure.exits}
        self.groups = positions(structure)
        self.out_h = trace.table["out_h"].fillna(0).tolist() \
            if "out_h" in trace.table else [0] * len(trace)
        self.inserted = self._choose_exits(structure)
        self.cutoff = self._cutoffs(self.relax)
        # configurations, most accurate first: no cap, then caps from the deepest exit
        caps = [FINAL, *sorted(self.inserted, reverse=True)]
        self.profile = [self._profile_cap(cap) for cap in caps]
        self.level = 0
        self._skips: dict[int, frozenset[int]] = {}
        self._frames: list[tuple[int, bool]] = []  # (exit taken, forced by a cap) per frame
        return Plan(placements, trace=trace, skip=self._skip)

    def _row_times(self, trace, units: int) -> list[float]:
        """Kernel times alone on the processor at the top OPP, per row of ``trace``."""
        dummy = Job(name="profile", trace=trace, device=self.context.default_device)
        return [self.context.duration(dummy, row, self.processor, units)
                for row in range(len(trace))]

    def _choose_exits(self, structure) -> tuple[int, ...]:
        if self.exits == "none":
            return ()
        if isinstance(self.exits, list):
            unknown = [j for j in self.exits if j not in structure.heads]
            if unknown:
                raise ConfigError(f"exit {unknown[0]!r} does not exist (exits: 0.."
                                  f"{max(structure.exits)})", path="exits")
            return tuple(sorted(self.exits))
        if self.exits == "branchynet":
            return tuple(self.groups[i][0]
                         for i in stage_ends(structure, self.out_h, self.groups))
        cutoff = self._cutoffs(0.0)
        chosen = (choose_designs(self.costs, cutoff, self._profiling, self.groups)
                  if any(len(g) > 1 for g in self.groups) else list(structure.exits))
        if self.exits == "all":
            return tuple(chosen)
        return insertion_plan(self.costs, cutoff, self._profiling, chosen).exits

    def _cutoffs(self, relax: float) -> dict[int, float]:
        """Largest difficulty leaving at each exit: where its confidence meets its threshold.

        Computed through the confidence rule (``Conf >= threshold``), which for
        this confidence model amounts to ``d <= q + relax``.
        """
        grid = np.linspace(0.0, 1.0, 2001)
        out = {}
        for j, q in self.q.items():
            passing = grid[exit_confidence(grid, q, self.classes, self.slope)
                           >= threshold(q, self.classes, self.slope, relax) - 1e-12]
            out[j] = float(passing.max()) if len(passing) else -1.0
        return out

    def _profile_cap(self, cap: int) -> dict:
        """Expected compute (s) and accuracy per frame with depth cap ``cap`` (FINAL: none)."""
        taken = self._capped(exits_taken(self._profiling, self.inserted, self.cutoff), cap)
        compute = frame_costs(self.costs, self.inserted, taken)
        return {"cap": cap, "compute": float(compute.mean()),
                "tail": float(np.quantile(compute, self.deadline_quantile)),
                "accuracy": float(np.mean(self._correct(self._profiling, taken)))}

    @staticmethod
    def _capped(taken: np.ndarray, cap: int) -> np.ndarray:
        """Exits taken when no frame may go beyond exit ``cap``."""
        if cap == FINAL:
            return taken
        return np.where((taken == FINAL) | (taken > cap), cap, taken)

    def _correct(self, difficulty: np.ndarray, taken: np.ndarray) -> np.ndarray:
        q = np.array([self.q[j] if j != FINAL else self.accuracy for j in taken])
        return difficulty <= q + 1e-12

    # -- run time ------------------------------------------------------------
    def _skip(self, iteration: int) -> frozenset[int]:
        d = np.array([self._video[iteration]])
        natural = exits_taken(d, self.inserted, self.cutoff)
        taken = int(self._capped(natural, self.profile[self.level]["cap"])[0])
        self._frames.append((taken, taken != int(natural[0])))
        if taken not in self._skips:
            self._skips[taken] = self.structure.skip(self.inserted, taken)
        return self._skips[taken]

    def _start(self):
        """SimPy process at time 0: pace the camera and watch frame latencies."""
        self.adaptations = 0
        self._smoothed = None
        if self._job is None:
            return
        handle = self.context.job(self._job)
        if self.camera_fps:
            handle.pace(1.0 / self.camera_fps)
        if self.adapt:
            handle.on_iteration(self._observe)
        for when, share in self._shares:
            if when > self.context.now:
                yield self.context.timeout(when - self.context.now)
            handle.set_share(share, self.processor)

    def _observe(self, handle) -> None:
        """Re-pick the depth cap from the profile after each frame (see module docstring)."""
        start, end = handle.iteration_times[-1]
        latency = end - start
        taken, _ = self._frames[len(handle.iteration_times) - 1]
        expected = self._frame_compute(taken)
        ratio = latency / expected if expected > 0 else 1.0
        w = self.smoothing
        self._smoothed = ratio if self._smoothed is None else w * ratio + (1 - w) * self._smoothed
        deadline = 1.0 / self.camera_fps
        floor = self.profile[0]["accuracy"] - self.max_accuracy_loss / 100.0
        allowed = [level for level, entry in enumerate(self.profile)
                   if entry["accuracy"] >= floor - 1e-12] or [0]
        best = allowed[-1]  # the cheapest allowed when none meets the deadline
        for level in allowed:
            if self.profile[level]["tail"] * self._smoothed <= deadline:
                best = level
                break
        if best != self.level:
            self.level = best
            self.adaptations += 1

    def _frame_compute(self, taken: int) -> float:
        return float(frame_costs(self.costs, self.inserted, np.array([taken]))[0])

    def metrics(self, result, iterations) -> dict[str, float]:
        if self._job is None:
            return {}
        times = iterations.get(self._job, [])
        frames = self._frames[:len(times)]
        if not frames:
            return {"frames": 0.0}
        taken = np.array([t for t, _ in frames])
        d = np.array([self._video[i] for i in range(len(frames))])
        latency = np.array([end - start for start, end in times])
        out = {
            "frames": float(len(frames)),
            "accuracy_pct": 100.0 * float(np.mean(self._correct(d, taken))),
            "compute_per_frame_s": float(frame_costs(self.costs, self.inserted, taken).mean()),
            "flops_per_frame": float(frame_costs(self.flop_costs, self.inserted, taken).mean()),
            "early_exit_pct": 100.0 * float(np.mean(taken != FINAL)),
            "frame_latency_mean_s": float(latency.mean()),
            "energy_per_frame_j": result.metrics.get("energy_j", 0.0) / len(frames),
            "exits_inserted": float(len(self.inserted)),
            "forced_exit_pct": 100.0 * float(np.mean([forced for _, forced in frames])),
            "adaptations": float(getattr(self, "adaptations", 0)),
        }
        for p in PERCENTILES:
            out[f"frame_latency_p{p}_s"] = float(np.percentile(latency, p))
        if self.camera_fps:
            out["deadline_miss_pct"] = 100.0 * float(np.mean(latency > 1.0 / self.camera_fps))
        return out
