"""NestDNN policies: ``nestdnn-mintotal``, ``nestdnn-minmax`` and ``nestdnn-baseline``.

Every workload of the experiment is an app with a multi-capacity model
(``{name: VC, model: multicapacity, options: {app: VC}}``). The policy
profiles the apps' descendants on the SoC (latency at full compute from
simulation), plays the app lifecycle (by default NestDNN's benchmark: each
second an app starts or one is killed, 2 to 6 at once, 60 s) and, on every
start, kill and priority change, re-divides the processor among the running
apps:

* ``nestdnn-mintotal`` / ``nestdnn-minmax``: NestDNN's greedy MinTotalCost /
  MinMaxCost scheduler (:mod:`.scheduler`), cached by default, with the
  user's ``alpha``;
* ``nestdnn-baseline``: the status quo: each app runs a fixed model, an
  independently compressed one (the knee of the app's own curve of such
  models, ``baseline:`` in the profile), and the apps share the processor
  equally.

Run metrics (besides the engine's): ``inferences``, ``frame_rate_fps`` (mean
of the apps' frame rates, weighted by running time), ``frame_latency_s`` (mean
frame latency, same weights) and its inverse ``inverse_latency_fps``,
``relative_frame_rate`` (each app's frame rate in units of its goal rate
``1 / L_max``, averaged with the same weights: the neutral average),
``accuracy_pct``, ``accuracy_gain_pct`` (over the baseline models),
``energy_per_inference_j``, ``switches``, ``model_loads``, ``page_in_mb``,
``page_out_mb``, ``scheduler_decisions``, ``scheduler_evaluations`` (per
decision), ``time_share_<n>apps_pct``, ``<app>.frame_rate_fps``, ``<app>.serving_s``
(seconds with a model) and ``<app>.accuracy_pct`` (its serving accuracy).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import numpy as np
from pydantic import ConfigDict, Field
from typing_extensions import TypedDict

from simulator.errors import ConfigError
from simulator.params import Bytes, PositiveFloat, PositiveInt, one_of
from simulator.policy import POLICIES, Job, Plan, Policy
from workloads.lifecycle import START, Lifecycle, LifecycleEvent
from workloads.multicapacity.latency import profile_latencies
from workloads.multicapacity.profile import load_profiles
from workloads.multicapacity.switching import SCHEMES

from .manager import LATENCY_COSTS, SHARING, AppManager, AppState, demands
from .scheduler import Allocation, CachedScheduler

# NestDNN's benchmark. p_start is fitted (least squares on the stationary
# shares, workloads.lifecycle.fit_start_probability) to the paper's share of
# time at 2..6 concurrent apps: 9.8 / 12.7 / 18.6 / 24.5 / 34.3 %.
PAPER_LIFECYCLE = {"p_start": 0.5789, "min_apps": 2, "max_apps": 6, "period": 1.0,
                   "duration": 60.0, "initial": None, "p_priority": 0.0, "seed": None}




class LifecycleOverrides(TypedDict, total=False):
    """Keys of the paper's lifecycle a ``lifecycle:`` mapping may override (the
    lifecycle itself checks their values)."""

    __pydantic_config__ = ConfigDict(extra="forbid")
    p_start: Any
    min_apps: Any
    max_apps: Any
    period: Any
    duration: Any
    initial: Any
    p_priority: Any
    seed: int | None


Alpha = Annotated[float, Field(ge=0)]
LifecycleChoice = Literal["paper", "static"] | LifecycleOverrides
Scheme = one_of(SCHEMES)
Sharing = one_of(SHARING)
LatencyCost = one_of(LATENCY_COSTS)


class AppMix(Policy):
    """Base of the NestDNN policies: profiles, lifecycle, the app manager.

    Args:
        alpha: the latency-vs-accuracy knob of NestDNN's cost function; the
            baseline does not decide by it but reports its cost under it too.
        processor: processor the apps share (``cpu.big`` on the Snapdragon 835).
        cores: units of it the apps use (all if None).
        memory: memory available to the apps' models (``400 MB``).
        profile: multi-capacity profile (bundled name or YAML path).
        lifecycle: ``paper`` (NestDNN's benchmark), ``static`` (every app from time
            0, running its workload's iterations), or a mapping overriding keys of
            the paper's (``p_start``, ``min_apps``, ``max_apps``, ``period``,
            ``duration``, ``initial``, ``p_priority``, ``seed``: a schedule seed of its
            own, so that runs of different policies see the same app mix; None
            draws it from the run's generator).
        scheme: ``multi-capacity`` (nested descendants) or ``independent`` models.
        max_inferences: end the run after this many frames in all (None: never).
        camera_fps: frames per second the camera gives each app (None: an app
            processes frames back to back).
        sharing: ``weights``: shares are work-conserving weights (an idle app's
            share goes to the busy ones, as Linux CFS cgroup ``cpu.shares``);
            ``caps``: each app gets exactly its share.
        latency_cost: the unit of latency in NestDNN's cost: ``relative`` (each
            app's latency in units of its own goal) or ``seconds``.
    """

    conformance = {"params": {"lifecycle": "static", "processor": "cpu.gold"},
                   "workload": {"name": "VS", "model": "multicapacity",
                                "options": {"app": "VS"}}}
    # its metrics are the app manager's counts and times, the run's energy and
    # every frame's latency: no kernel record
    metrics_read_records = False
    metrics_read_iterations = True

    def __init__(self, alpha: Alpha = 0.01, processor: str = "cpu.big",
                 cores: PositiveInt | None = None, memory: Bytes = "400 MB",
                 profile: str = "nestdnn", lifecycle: LifecycleChoice = "paper",
                 scheme: Scheme = "multi-capacity", max_inferences: PositiveInt | None = None,
                 camera_fps: PositiveFloat | None = 30.0, sharing: Sharing = "weights",
                 latency_cost: LatencyCost = "relative"):
        self.alpha = float(alpha)
        self.latency_cost = latency_cost
        self.processor = processor
        self.cores = cores
        self.memory = memory
        self._memory = float(memory)
        self.profile = profile
        self.scheme = scheme
        self.max_inferences = max_inferences
        self.camera_fps = camera_fps
        self.sharing = sharing
        self.lifecycle = lifecycle
        self._lifecycle = self._lifecycle_params(lifecycle)
        self._apps: dict[str, AppState] = {}

    @staticmethod
    def _lifecycle_params(value: str | dict) -> dict | None:
        if value == "static":
            return None
        return {**PAPER_LIFECYCLE, **(value if isinstance(value, dict) else {})}

    # -- binding and planning ---------------------------------------------------
    def bind(self, context) -> None:
        super().bind(context)
        context.require_processor(self.processor)
        profiles = load_profiles(self.profile)
        self._profiles = profile_latencies(profiles, context.soc(),
                                           self.processor, self.cores)
        self.rng = context.rng.spawn(1)[0]
        self.manager: AppManager | None = None
        context.start(self._run())

    def plan(self, job: Job) -> Plan:
        options = job.params.get("options") or {}
        name = options.get("app", job.name) if job.params.get("model") == "multicapacity" \
            else job.name
        if name not in self._profiles:
            raise ConfigError(f"job {job.name!r} is not an app of profile {self.profile!r} "
                              f"(apps: {', '.join(self._profiles)}); use a workload like "
                              "{model: multicapacity, options: {app: VC}}")
        if name in self._apps:
            raise ConfigError(f"app {name!r} appears twice in the workload")
        profile = self._app_profile(self._profiles[name])
        app = AppState(name=name, job=job.name, profile=profile,
                       baseline=profile.baseline_knee(),
                       reference=profile.baseline_accuracy())
        self._apps[name] = app
        manager = self._manager()
        return manager.plan(app, len(profile.descendants) - 1)

    def _app_profile(self, profile):
        """The models the app runs: its multi-capacity model's descendants."""
        return profile

    def _manager(self) -> AppManager:
        if self.manager is None:
            self.manager = AppManager(self.context, self._apps, self.processor, self.cores,
                                      self.decide, self.scheme, self.max_inferences,
                                      self.camera_fps, self.sharing, self.alpha,
                                      self.latency_cost)
        return self.manager

    def _run(self):
        """SimPy process: build the lifecycle of the planned apps and play it."""
        manager = self._manager()
        names = tuple(self._apps)
        if self._lifecycle is None:
            events = [LifecycleEvent(0.0, START, name) for name in names]
            duration = None
        else:
            params = dict(self._lifecycle)
            seed = params.pop("seed")
            rng = self.rng if seed is None else np.random.default_rng(seed)
            params["max_apps"] = min(params["max_apps"], len(names))
            params["min_apps"] = min(params["min_apps"], params["max_apps"])
            try:
                lifecycle = Lifecycle(apps=names, **params)
            except ConfigError as err:
                raise err.within(prefix="policy") from None
            events = lifecycle.schedule(rng)
            duration = lifecycle.duration
        yield from manager.lifecycle(events, duration)

    # -- decisions --------------------------------------------------------------
    def decide(self, running: list[AppState]) -> Allocation:  # pragma: no cover - abstract
        raise NotImplementedError

    def metrics(self, result, iterations) -> dict[str, float]:
        if self.manager is None:
            return {}
        levels = range(self._lifecycle["min_apps"], self._lifecycle["max_apps"] + 1) \
            if self._lifecycle else range(0)
        return self.manager.metrics(result.metrics.get("energy_j", 0.0), levels, iterations)


class _NestDNN(AppMix):
    """NestDNN's scheduler (see :mod:`.scheduler`); ``objective`` set by the subclass.

    Args:
        cached: start from the cached partial allocation (else always from zero).
        cache_fraction: share of the compute taken from the cache.
        refresh_every: decisions between full allocations.
        units: indivisible units the compute is divided into (100 = 1 %).
        (the rest as :class:`AppMix`)
    """

    objective = "total"

    def __init__(self, alpha: Alpha = 0.01, cached: bool = True,
                 cache_fraction: Annotated[float, Field(ge=0, lt=1)] = 0.7,
                 refresh_every: PositiveInt = 10, units: PositiveInt = 100,
                 processor: str = "cpu.big", cores: PositiveInt | None = None,
                 memory: Bytes = "400 MB", profile: str = "nestdnn",
                 lifecycle: LifecycleChoice = "paper", scheme: Scheme = "multi-capacity",
                 max_inferences: PositiveInt | None = None,
                 camera_fps: PositiveFloat | None = 30.0, sharing: Sharing = "weights",
                 latency_cost: LatencyCost = "relative"):
        super().__init__(alpha, processor, cores, memory, profile, lifecycle, scheme,
                         max_inferences, camera_fps, sharing, latency_cost)
        self.cached = cached
        self.cache_fraction = cache_fraction
        self.refresh_every = refresh_every
        self.units = units
        self.scheduler = CachedScheduler(self.objective, cache_fraction if cached else 0.0,
                                         refresh_every if cached else 1, units)

    def decide(self, running: list[AppState]) -> Allocation:
        return self.scheduler.decide(demands(running, self.latency_cost), self.alpha,
                                     self._memory)


@POLICIES.register("nestdnn-mintotal")
class NestDNNMinTotal(_NestDNN):
    """NestDNN with the MinTotalCost objective (sum of the apps' costs)."""

    name = "nestdnn-mintotal"
    objective = "total"


@POLICIES.register("nestdnn-minmax")
class NestDNNMinMax(_NestDNN):
    """NestDNN with the MinMaxCost objective (largest app cost)."""

    name = "nestdnn-minmax"
    objective = "max"


@POLICIES.register("nestdnn-baseline")
class NestDNNBaseline(AppMix):
    """The status quo: a fixed model per app, equal shares.

    Each app runs its baseline model: the knee of its own curve of
    independently compressed models (the profile's ``baseline:``), not a
    descendant of the multi-capacity model. With ``sharing: weights`` (the
    default) equal weights are what a fair OS scheduler gives: the busy apps
    split the processor equally.

    Arguments as :class:`AppMix`.
    """

    name = "nestdnn-baseline"

    def _app_profile(self, profile):
        return profile.as_baseline()

    def decide(self, running: list[AppState]) -> Allocation:
        return Allocation(descendant={a.name: a.baseline for a in running},
                          units={a.name: 1 for a in running}, cost={},
                          total_units=len(running), evaluations=0)
