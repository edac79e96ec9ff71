"""Running NestDNN's app mix on the engine: lifecycle, scheduling, switching, metrics.

The :class:`AppManager` is the run-time half of the NestDNN policies. Each
workload is an app (a ``multicapacity`` workload); the manager

* follows the lifecycle schedule (:mod:`workloads.lifecycle`): a started app
  loads its model from flash (the SoC's storage, :mod:`simulator.engine.
  storage`) and then processes the camera's frames (at most ``camera_fps``,
  back to back when it cannot keep up); a killed app is suspended
  and its frame in flight dropped (``JobHandle.abort``);
* on every start, kill and priority change asks its ``decide`` function for
  each running app's descendant and compute share, and applies it: shares at
  once (``JobHandle.set_share``: running kernels are re-timed), as work-conserving
  weights by default (a share an idle app does not use goes to the busy ones,
  as Linux CFS does with cgroup ``cpu.shares``) or as caps; descendants by
  switching: an upgrade pages in the extra filters and the app keeps running
  the old descendant until they are in; a downgrade of a multi-capacity model
  only releases memory (independent models page the whole smaller model in);
* accounts frames, time, accuracy (time-weighted by the descendant serving),
  switching traffic and the scheduler's work, for :meth:`AppManager.metrics`.

Accuracy gain is measured against each app's baseline model (the knee of its
own curve of independently compressed models, :meth:`~workloads.multicapacity.
profile.AppProfile.baseline_knee`), whatever the app runs.
"""

from __future__ import annotations

from collections.abc import Callable

from simulator.policy import Placement, Plan
from workloads.lifecycle import KILL, PRIORITY, START, LifecycleEvent
from workloads.multicapacity.switching import MULTI_CAPACITY, switch_traffic

from ..split import serialize
from .apps import AppState
from .scheduler import Allocation, Demand, Option, cost

MB = 1e6
WEIGHTS, CAPS = "weights", "caps"
SHARING = (WEIGHTS, CAPS)


class AppManager:
    """Drives the apps of one run (see the module docstring).

    Args:
        context: the policy context (job handles, storage, processor specs).
        apps: app state per app name.
        processor: where the apps' kernels run; cores: units used (all if None).
        decide: ``running apps -> Allocation``; the policy's scheduler.
        scheme: how descendants are stored: ``multi-capacity`` or ``independent``.
        max_inferences: stop the run after this many frames in all (None: never).
        camera_fps: frames per second the camera delivers to each app (None:
            frames always ready, the app processes back to back).
        sharing: ``weights`` (work-conserving, idle shares go to busy apps) or
            ``caps`` (each app gets exactly its share).
        alpha: weight of latency in the NestDNN cost the run reports (whatever decides).
        latency_cost: unit of latency in that cost (``relative`` or ``seconds``).
    """

    def __init__(self, context, apps: dict[str, AppState], processor: str, cores: int | None,
                 decide: Callable[[list[AppState]], Allocation], scheme: str = MULTI_CAPACITY,
                 max_inferences: int | None = None, camera_fps: float | None = None,
                 sharing: str = "weights", alpha: float = 0.0,
                 latency_cost: str = "relative"):
        self.context = context
        self.storage = context.storage()
        self.apps = apps
        self.processor = processor
        spec = context.processors()[processor]
        self.units = spec.units if cores is None else cores
        self.decide = decide
        self.scheme = scheme
        self.max_inferences = max_inferences
        self.frame_interval = 1.0 / camera_fps if camera_fps else None
        self.sharing = sharing
        self.alpha = alpha
        self.latency_cost = latency_cost
        self._cost = (0.0, 0.0)  # (sum, max) of the apps' costs since the last decision
        self._cost_since = 0.0
        self.cost_time = [0.0, 0.0]  # time integrals of the sum and max
        self._plans: dict[tuple[str, int], Plan] = {}
        self._by_job: dict[str, AppState] = {}
        self.decisions = 0
        self.evaluations = 0
        self.switches = 0
        self.page_in = 0.0  # bytes
        self.page_out = 0.0
        self.loads = 0
        self.frames = 0
        self.concurrency: dict[int, float] = {}  # apps running -> seconds
        self._count_since = 0.0
        self.end: float | None = None
        self.stopped = False

    # -- plans -------------------------------------------------------------
    def plan(self, app: AppState, index: int) -> Plan:
        """The plan of descendant ``index``: one operator at a time on the processor."""
        key = (app.name, index)
        if key not in self._plans:
            trace = serialize(app.profile.trace(index))
            placement = Placement(self.processor, self.units, 1.0)
            self._plans[key] = Plan([placement] * len(trace), trace=trace)
        return self._plans[key]

    # -- the run -------------------------------------------------------------
    def attach(self) -> None:
        """Suspend every app until the lifecycle starts it; count frames."""
        self._by_job = {app.job: app for app in self.apps.values()}
        for app in self.apps.values():
            handle = self.context.job(app.job)
            handle.suspend()
            handle.on_iteration(self._frame_done)
            if self.frame_interval is not None:
                handle.pace(self.frame_interval, self._waiting, self._frame_due)

    def lifecycle(self, events: list[LifecycleEvent], duration: float | None):
        """SimPy process: play the schedule; stop every app at ``duration``."""
        self.attach()
        for event in events:
            if event.time > self.context.now:
                yield self.context.timeout(event.time - self.context.now)
            if self.stopped:
                return
            self.handle(event)
        if duration is not None:
            if duration > self.context.now:
                yield self.context.timeout(duration - self.context.now)
            self.stop_all()

    def handle(self, event: LifecycleEvent) -> None:
        """Apply one lifecycle event and reschedule."""
        self._count_concurrency()
        app = self.apps[event.app]
        now = self.context.now
        self._account(app, now)
        if event.kind == START:
            app.running = True
        elif event.kind == KILL:
            app.running = False
            handle = self.context.job(app.job)
            handle.suspend()
            handle.abort()
            # Its model leaves memory: pages are released, nothing is written back.
            self.page_out += app.sizes()[app.resident] if app.resident >= 0 else 0.0
            app.resident = app.active = app.target = -1
            app.loading = app.idle = False
        elif event.kind == PRIORITY:
            app.priority = event.priority
        self.reschedule()

    def reschedule(self) -> None:
        """Ask the scheduler and apply its allocation to the running apps."""
        running = [a for a in self.apps.values() if a.running]
        if not running:
            return
        allocation = self.decide(running)
        self.decisions += 1
        self.evaluations += allocation.evaluations
        self._track_cost(running, allocation)
        for app in running:
            app.share = max(allocation.share(app.name), 1e-3)
        self._rebalance()
        for app in running:
            self.switch(app, allocation.descendant[app.name])

    def _rebalance(self) -> None:
        """Apply the shares: as caps, or as work-conserving weights among busy apps.

        With ``weights`` (Linux CFS with cgroup ``cpu.shares``), an app that is
        idle (waiting for the camera, loading its first model) leaves its share
        to the busy ones in proportion to theirs; with ``caps`` every app gets
        exactly its share and idle shares go unused.
        """
        if self.sharing == CAPS:
            apps = [a for a in self.apps.values() if a.running]
            target = [a.share for a in apps]
        else:
            apps = [a for a in self.apps.values() if a.running and a.active >= 0 and not a.idle]
            total = sum(a.share for a in apps)
            target = [min(1.0, a.share / total) for a in apps]
        # Shrink shares before growing others so the processor is not over-committed.
        stopped = [a for a in self.apps.values() if a.effective and a not in apps]
        for app in stopped:  # no longer busy: its share is free again
            self._integrate_share(app)
            app.effective = 0.0
        for share, app in sorted(zip(target, apps), key=lambda pair: pair[0] - pair[1].effective):
            if abs(share - app.effective) > 1e-12:
                self._integrate_share(app)
                app.effective = share
                self.context.job(app.job).set_share(share, self.processor)

    def _integrate_share(self, app: AppState) -> None:
        """Accumulate the app's processor share over time (for energy attribution)."""
        now = self.context.now
        app.share_time += app.effective * (now - app.share_since)
        app.share_since = now

    def switch(self, app: AppState, index: int) -> None:
        """Make ``index`` the app's descendant (page-in first when needed)."""
        app.target = index
        if app.loading or index == app.active:
            return  # a finished load re-checks the target
        if app.resident >= 0 and (index == app.resident or (
                index < app.resident and self.scheme == MULTI_CAPACITY)):
            # Nested: the smaller descendant is in memory already; its extra
            # filters are released.
            traffic = switch_traffic(app.sizes(), app.resident, index, self.scheme)
            self.page_out += traffic.page_out
            app.resident = index
            self._activate(app, index)
            return
        traffic = switch_traffic(app.sizes(), app.resident, index, self.scheme)
        self.loads += app.resident < 0
        self.page_in += traffic.page_in
        self.page_out += traffic.page_out
        app.loading = True
        token = self.context.job(app.job).epoch

        def loaded() -> None:
            if not app.running or token != self.context.job(app.job).epoch:
                return  # killed while loading
            app.loading = False
            app.resident = index
            self._activate(app, index)
            if app.target != index:
                self.switch(app, app.target)

        if self.storage is None:
            loaded()
        else:
            self.storage.load(traffic.page_in, loaded, f"{app.name}: descendant {index}")

    def _activate(self, app: AppState, index: int) -> None:
        self._account(app, self.context.now)
        self.switches += 0 <= app.active != index
        app.active = index
        handle = self.context.job(app.job)
        handle.replan(self.plan(app, index))
        if app.running and not app.idle:
            self._rebalance()
            handle.resume()

    def _frame_done(self, handle) -> None:
        self.frames += 1
        app = self._by_job[handle.name]
        app.frames += 1
        if self.max_inferences is not None and self.frames >= self.max_inferences:
            self.stop_all()

    def _waiting(self, handle) -> None:
        """A frame processed early waits for the camera's next one: its share goes idle."""
        self._by_job[handle.name].idle = True
        self._rebalance()

    def _frame_due(self, handle) -> bool:
        app = self._by_job[handle.name]
        app.idle = False
        if self.stopped or not app.running or app.active < 0:
            return False
        self._rebalance()
        return True

    def stop_all(self) -> None:
        """End the run: account the time, abort frames in flight, stop every job."""
        if self.stopped:
            return
        self.stopped = True
        self._count_concurrency()
        now = self.context.now
        self.end = now
        for app in self.apps.values():
            self._account(app, now)
            handle = self.context.job(app.job)
            handle.abort()
            handle.stop()

    # -- accounting ----------------------------------------------------------
    def _account(self, app: AppState, now: float) -> None:
        dt = now - app.since
        app.since = now
        if dt <= 0 or not app.running:
            return
        app.alive += dt
        if app.active >= 0:
            accuracy = app.profile.descendants[app.active].accuracy
            base = app.reference
            app.serving += dt
            app.accuracy_time += accuracy * dt
            app.gain_time += (accuracy - base) * dt

    def _track_cost(self, running: list[AppState], allocation: Allocation) -> None:
        """Integrate the NestDNN cost of the allocation in force (sum and max over apps)."""
        self._integrate_cost()
        costs = [cost(a.profile.descendants[allocation.descendant[a.name]],
                      allocation.share(a.name), demand, self.alpha)
                 for a, demand in zip(running, demands(running, self.latency_cost))]
        self._cost = (sum(costs), max(costs, default=0.0))

    def _integrate_cost(self) -> None:
        now = self.context.now
        for i in (0, 1):
            self.cost_time[i] += self._cost[i] * (now - self._cost_since)
        self._cost_since = now

    def _count_concurrency(self) -> None:
        now = self.context.now
        running = sum(a.running for a in self.apps.values())
        self.concurrency[running] = self.concurrency.get(running, 0.0) + now - self._count_since
        self._count_since = now

    def metrics(self, energy: float, levels: range,
                iterations: dict[str, list[tuple[float, float]]]) -> dict[str, float]:
        """Run metrics (units in the names); see docs/nestdnn_flexdnn.md.

        Args:
            energy: the run's energy (J).
            levels: concurrency levels to report time shares for.
            iterations: (start, end) of each completed frame per job.
        """
        now = self.context.now
        if not self.stopped:
            self._count_concurrency()
            for app in self.apps.values():
                self._account(app, now)
        alive = sum(a.alive for a in self.apps.values())
        serving = sum(a.serving for a in self.apps.values())
        span = sum(self.concurrency.values())
        out = {
            "inferences": float(self.frames),
            "frame_rate_fps": self.frames / alive if alive > 0 else 0.0,
            "accuracy_pct": 100 * sum(a.accuracy_time for a in self.apps.values()) / serving
            if serving > 0 else float("nan"),
            "accuracy_gain_pct": 100 * sum(a.gain_time for a in self.apps.values()) / serving
            if serving > 0 else float("nan"),
            "energy_per_inference_j": energy / self.frames if self.frames else float("nan"),
            "switches": float(self.switches),
            "model_loads": float(self.loads),
            "page_in_mb": self.page_in / MB,
            "page_out_mb": self.page_out / MB,
            "scheduler_decisions": float(self.decisions),
            "scheduler_evaluations": self.evaluations / self.decisions if self.decisions
            else 0.0,
        }
        # Energy per inference per app: the phone's energy (idle and shared power
        # included) split among the apps by the processor share each held over
        # time, over the app's frames; averaged over apps weighted by running time,
        # as frame_rate_fps averages their rates.
        for app in self.apps.values():
            self._integrate_share(app)
        held = sum(a.share_time for a in self.apps.values())
        per_app = [(a.alive, energy * a.share_time / held / a.frames)
                   for a in self.apps.values() if a.frames and held > 0]
        alive_served = sum(w for w, _ in per_app)
        out["app_energy_per_inference_j"] = (sum(w * e for w, e in per_app) / alive_served
                                             if alive_served else float("nan"))
        for app in self.apps.values():
            out[f"{app.name}.energy_per_inference_j"] = (
                energy * app.share_time / held / app.frames if app.frames and held > 0
                else float("nan"))
        # Mean frame latency of the apps, weighted by their running time; its
        # inverse is a frame rate averaged the other way (harmonic, not arithmetic).
        weighted = [(a.alive, sum(e - s for s, e in iterations.get(a.job, []))
                     / len(iterations[a.job])) for a in self.apps.values()
                    if a.alive > 0 and iterations.get(a.job)]
        weight = sum(w for w, _ in weighted)
        mean_latency = sum(w * lat for w, lat in weighted) / weight if weight else 0.0
        out["frame_latency_s"] = mean_latency
        out["inverse_latency_fps"] = 1.0 / mean_latency if mean_latency > 0 else 0.0
        # The neutral average (the dissertation defines an app's frame rate, not how
        # to average it over apps): each app's frame rate in units of its own goal
        # rate 1 / L_max (the unit of the cost's latency term), averaged over apps
        # weighted by running time. Scale-free: a frame of a 3-ms app and one of a
        # 200-ms app count by how far each app is from the best its model can do.
        relative = [(a.alive, a.frames / a.alive * a.profile.max_latency)
                    for a in self.apps.values()
                    if a.alive > 0 and a.profile.max_latency]
        weight = sum(w for w, _ in relative)
        out["relative_frame_rate"] = (sum(w * r for w, r in relative) / weight
                                      if weight else 0.0)
        self._integrate_cost()
        span_cost = self._cost_since
        out["nestdnn_total_cost"] = self.cost_time[0] / span_cost if span_cost else 0.0
        out["nestdnn_max_cost"] = self.cost_time[1] / span_cost if span_cost else 0.0
        for level in levels:
            out[f"time_share_{level}apps_pct"] = (100 * self.concurrency.get(level, 0.0) / span
                                                  if span > 0 else 0.0)
        for app in self.apps.values():
            out[f"{app.name}.frame_rate_fps"] = app.frames / app.alive if app.alive else 0.0
            # what the accuracy gain is made of, so that it can be re-measured against
            # other baseline models (validation.nestdnn.report --drop-ratios)
            out[f"{app.name}.serving_s"] = app.serving
            out[f"{app.name}.accuracy_pct"] = (100 * app.accuracy_time / app.serving
                                               if app.serving > 0 else float("nan"))
        return out


RELATIVE, SECONDS = "relative", "seconds"
LATENCY_COSTS = (RELATIVE, SECONDS)


def demands(apps: list[AppState], latency_cost: str = RELATIVE) -> list[Demand]:
    """The scheduler's view of the running apps.

    Args:
        apps: the running apps.
        latency_cost: ``relative`` (latency in units of each app's goal) or
            ``seconds`` (see :mod:`.scheduler`).
    """
    return [Demand(name=a.name,
                   options=tuple(Option(d.accuracy, d.latency, d.memory)
                                 for d in a.profile.descendants),
                   min_accuracy=a.profile.min_accuracy, max_latency=a.profile.max_latency,
                   priority=a.priority,
                   latency_unit=a.profile.max_latency if latency_cost == RELATIVE else 1.0)
            for a in apps]
