"""Fast-forward: repeat memoised iterations while a device's DVFS/thermal state holds.

A long training run (150 epochs of CIFAR-10: ~117 k batches, a day of simulated
time) repeats one kernel DAG over and over; simulating every kernel of every
batch would take hours. A job with ``fast_forward`` instead learns, per
*state*, what an iteration does, and repeats it:

* The state is every frequency domain's thermal cap and, unless a periodic
  (utilisation-driven) governor moves it, its OPP index on the job's device
  (:meth:`Device.dvfs_state`), together with the plan's skipped rows for the
  iteration (conditional kernels), which make iterations differ. What a
  utilisation-driven governor does within an iteration is part of the record.
* While an iteration runs kernel by kernel, its time is cut into segments at
  every state change, and each segment is credited to its state: its length,
  the progress it made (the share of the iteration's work it did, each kernel
  weighted by its stand-alone duration at the top OPP, running kernels by the
  fraction they have done), and what
  every processor of the device did (dynamic energy, busy unit-seconds,
  busiest-core busy time, DRAM bytes). A steady iteration is one segment. A
  whole iteration's segment measures the state; a part's progress is an
  estimate (the weights are off where kernels run side by side), so a state's
  rates are its whole iterations' once it has one (:class:`_Record`).
* An iteration starting in a state with at least one iteration's worth of
  recorded progress is *replayed*: progress advances at the state's rate
  (recorded progress / recorded time) and every processor *holds* the state's
  average rates (:meth:`Processor.hold`). Everything else keeps running: the
  sampler integrates the power into the thermal network (with leakage at the
  current temperature), the thermal governor polls and may move the caps. The
  DVFS governors hold their OPPs (what they do within an iteration is in the
  record; deciding on held averages would not be), and the sampler takes one
  step per thermal poll instead of one per thermal step (the power is
  constant, so the longer step is still exact).
* When the state changes during a replay, the replay goes on at the new
  state's rates if that state is known. If it is not (once every domain the
  poll moves has moved: :meth:`_Replay.decide`), the replay ends there and the
  job runs the rest of the iteration at kernel level, from the point of the
  iteration the replay's progress stands for (:mod:`simulator.engine.schedule`):
  holding the old state's rates to the iteration's end overshot every step of a
  throttling descent (issue 21). The kernel-level rest records the new state,
  and so do the next iterations until it is known.

So a steady run (a DSP at a fixed clock, a phone that never throttles) is
simulated kernel by kernel once per state and repeated, and a throttling one
(caps stepping up and down around a trip) replays the few states it visits at
their measured rates. Replayed iterations leave no kernel records. The job
must be alone on its device (the records would not see another job's load); a
job sharing its device holds its steady frames instead
(:mod:`simulator.engine.tenant`).

**Steady state** (any periodic job, nothing specific to one policy): while
iterations are replayed, the device is *steady* when no OPP or cap has changed
for ``_QUIET_S`` seconds, its temperatures are within ``_GAP_K`` of the
thermal fixed point of the current power (:meth:`ThermalNetwork.steady_state`)
and every trip sensor is on the same side of each of its thresholds (trip
temperature, and that minus the hysteresis) now and at that fixed point: the
step-wise governor's polls, no-ops for the quiet spell, stay no-ops on the way.
A steady device is sampled at the coarser of its poll and sample periods
(still an exact step for the held power, with leakage at the current
temperature), and the job replays every known iteration up to its next pause
in one *block* (:meth:`FastForward.replay_block`): the processors hold the
block's time-weighted mean rates and each iteration still gets its own start
and end. A cap or OPP change during a block ends it after the iteration in
progress (the block's mean rates were held until then), or at once if the new
state has no record (the rest of that iteration at kernel level, as above).
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections import Counter
from collections.abc import Callable
from itertools import accumulate

import numpy as np

from .device import Device
from .limit_cycle import CycleLog
from .lookahead import LookAhead
from .schedule import Schedule

_ENOUGH = 1.0  # iterations' worth of recorded progress before a state is replayed
# Steady-state test (see the module docstring). _QUIET_S: 40 polls of Android's
# 250 ms passive polling; _GAP_K: the leakage of a node that far from its fixed
# point differs by ~2 % (doubling every ~15-25 K), and the sampler still steps
# it, so this only decides when the sampler may stop polling every poll period.
_QUIET_S = 10.0  # s of replay without an OPP or cap change
_GAP_K = 0.5  # K, largest distance of any node from the fixed point


# SimPy has no public way to move the clock or withdraw an event, which a leap over
# whole periods needs (FastForward._leap). These two helpers, the kernels' completions
# (Processor._time) and the device's sampler events (Device._push) use SimPy's
# private API: ``env._queue``, a heap of (time, priority, id, event) entries,
# ``env._eid`` and ``env._now``. setup.cfg pins simpy to the 4.1 series for them.
def _horizon(env, owner) -> float:
    """Time (s) of the next queued event not owned by ``owner`` (``ff_owner``)."""
    return min((entry[0] for entry in env._queue
                if getattr(entry[3], "ff_owner", None) is not owner), default=math.inf)


def _jump(env, owner, to: float) -> None:
    """Withdraw ``owner``'s queued events and move the clock to ``to`` (s)."""
    queue = [entry for entry in env._queue if getattr(entry[3], "ff_owner", None) is not owner]
    heapq.heapify(queue)
    env._queue[:] = queue
    env._now = to


class _Sums:
    """Time, progress and per-processor work summed over segments."""

    __slots__ = ("time", "progress", "work")

    def __init__(self, processors: list[str]):
        self.time = 0.0  # s
        self.progress = 0.0  # iterations
        self.work = {local: [0.0, 0.0, 0.0, 0.0] for local in processors}


class _Record:
    """What the kernel-level segments of one state did, summed: apart, the
    segments that were a whole iteration (each a measurement of the state's
    iteration) and those that were a part of one (their progress weighs kernels
    by their stand-alone durations at the top OPPs: an estimate, off where kernels
    run side by side or scale unlike the rest). The rates are the wholes' once
    there is one, the parts' until then."""

    __slots__ = ("whole", "part")

    def __init__(self, processors: list[str]):
        self.whole = _Sums(processors)
        self.part = _Sums(processors)

    @property
    def seen(self) -> float:
        """Recorded progress, wholes and parts (iterations)."""
        return self.whole.progress + self.part.progress

    def best(self) -> _Sums:
        return self.whole if self.whole.progress > 0 else self.part

    def rates(self) -> dict[str, tuple[float, float, float, float]]:
        """Per processor: dynamic power (W), busy units, busiest-core busy
        fraction, DRAM traffic (B/s)."""
        best = self.best()
        return {local: tuple(v / best.time for v in work) for local, work in best.work.items()}


class _PlanData:
    """What fast-forward keeps per compiled plan, on the plan itself (its
    ``fast_forward`` attribute): each row's stand-alone duration at the top OPP
    (s), the weights of the last set of skipped rows (derived per set, one kept: a
    policy whose skipped rows vary per batch, Mandheling's rescaling schedule with
    ~650 sets in 150 epochs, would otherwise keep a row-long list per set) and per
    set of skipped rows the :class:`Schedule` of its first whole kernel-level
    iteration (compact arrays, 20 bytes a row)."""

    __slots__ = ("durations", "weights_skip", "weights", "schedules")

    def __init__(self, state):
        self.durations = [cost.duration(proc.domain.max_frequency)
                          for cost, proc in zip(state.costs, state.procs)]
        self.weights_skip: frozenset | None = None
        self.weights: list[float] = []
        self.schedules: dict[frozenset, Schedule] = {}

    @staticmethod
    def of(state) -> _PlanData:
        data = state.fast_forward
        if data is None:
            data = state.fast_forward = _PlanData(state)
        return data


class _Log:
    """A kernel-level iteration's ``(row, start s, end s)`` as its kernels end; with
    its ``expected`` kernels in, it becomes the :class:`Schedule` of its skipped rows."""

    __slots__ = ("entries", "schedules", "skip", "start", "expected")

    def __init__(self, schedules: dict, skip: frozenset, start: float, expected: int):
        self.entries: list[tuple[int, float, float]] = []
        self.schedules, self.skip, self.start, self.expected = schedules, skip, start, expected

    def append(self, entry: tuple[int, float, float]) -> None:
        self.entries.append(entry)
        if len(self.entries) == self.expected and self.skip not in self.schedules:
            self.schedules[self.skip] = Schedule(self.start, self.entries)
            self.entries = []


class FastForward:
    """Per-state records of one job's iterations, and their replay.

    Args:
        device: the job's device.
    """

    def __init__(self, device: Device, job: str):
        self.device = device
        self.job = job
        self.records: dict[tuple, _Record] = {}
        # One sampler step per thermal-governor poll while replaying.
        self.stride = max(1, round(device.spec.thermal.poll / device.step))
        self.replayed = 0
        self._skip: frozenset | None = None  # set while an iteration runs at kernel level
        self._whole = False  # the open segment is a whole iteration's so far
        self._key: tuple | None = None
        self._since = (0.0, 0.0, {})
        self.progress = 0.0  # completed kernels' weight, summed over iterations
        self.current: list[float] = []  # weights of the running iteration's rows
        # Per compiled plan (a job's _PlanState), its rows' durations, last weights
        # and schedules live on the plan itself (:class:`_PlanData`, its
        # ``fast_forward`` attribute): a replan drops them with the plan, and a new
        # plan cannot meet an old one's data (keyed by ``id`` they could: a freed
        # plan's id is reused).
        self.steady = False  # see the module docstring
        self._coarse = False  # the sampler took steps longer than a poll since a settle
        self._calm_since = device.env.now  # s: last OPP/cap change or non-replayed time
        # While steady, one sampler step per sample (and at least per poll).
        self.steady_stride = max(self.stride, device.sample_every)
        self._trips = ([(device.thermal.index[trip.sensor],
                         (trip.temperature, trip.temperature - trip.hysteresis))
                        for trip in device.spec.thermal.trips]
                       if device.trip_governor is not None else [])
        # The fixed point of a power vector is a product with the conductance
        # matrix's inverse (the watch runs every tick; a solve costs several).
        self._inverse = np.linalg.inv(device.thermal.conductance)
        # Between crossings, long steps when the polls they replace are no-ops.
        self._lookahead = LookAhead(device.thermal, device.trip_governor, self.stride)
        # Limit cycles (simulator.engine.limit_cycle): the log of the current
        # stretch of one-by-one replay, the replay in progress, the replayed
        # progress so far (iterations) and whether an OPP or cap changed this tick.
        self.cycles = CycleLog(len(device.thermal.names), len(device.energy),
                               2 * len(device.domains), slack=self.stride,
                               modes=device.thermal.modes())
        self._replay: _Replay | None = None
        self._cycle_skip: frozenset | None = None  # the skipped rows the log is about
        self._completed = 0
        self._changed = False
        self.leaps = 0  # whole-period skips
        self.leaped = 0.0  # s skipped by them
        device.tick_hook = self._watch
        for domain in device.domains.values():
            domain.listeners.append(self._on_change)

    # -- state ------------------------------------------------------------
    def key(self, skip: frozenset) -> tuple:
        """The state an iteration starting now with rows ``skip`` skipped is in."""
        return self.device.dvfs_state(), skip

    def known(self, key: tuple) -> bool:
        """Whether ``key`` has enough recorded progress to be replayed."""
        record = self.records.get(key)
        return record is not None and record.seen >= _ENOUGH and record.best().time > 0

    # -- kernel-level iterations ------------------------------------------
    def weights(self, state, skip: frozenset) -> list[float]:
        """Progress credited per completed row of a compiled plan (sums to 1)."""
        data = _PlanData.of(state)
        if data.weights_skip != skip:
            durations = data.durations
            if skip:
                durations = [0.0 if row in skip else d for row, d in enumerate(durations)]
            total = sum(durations) or 1.0
            data.weights_skip, data.weights = skip, [d / total for d in durations]
        self.current = data.weights
        return self.current

    def schedule(self, state, skip: frozenset) -> Schedule | None:
        """The schedule of the first whole kernel-level iteration of plan ``state``
        skipping ``skip``, if one ran."""
        return _PlanData.of(state).schedules.get(skip)

    def log(self, state, skip: frozenset) -> _Log | None:
        """While no :meth:`schedule` is known, a log for a kernel-level iteration
        starting now to fill with ``(row, start s, end s)`` as its kernels end; once
        full, it becomes the schedule (one cut short, aborted, is dropped with it)."""
        data = _PlanData.of(state)
        if skip in data.schedules:
            return None
        return _Log(data.schedules, skip, self.device.env.now, len(state.costs) - len(skip))

    def begin(self, skip: frozenset, whole: bool = True) -> None:
        """A kernel-level iteration starts: fine sampler steps, a new segment (a
        whole iteration's, unless a state change splits it or ``whole`` is False:
        the rest of a cut replay, :meth:`resume_point`)."""
        self.boundary()
        self.device.stride = 1
        self._skip = skip
        self._whole = whole
        self._open()

    def end(self) -> None:
        """The kernel-level iteration ended: credit its last segment."""
        self._close()
        self._skip = None

    def _open(self) -> None:
        self._key = self.key(self._skip)
        self._since = (self.device.env.now, self._progress_now(), self._cumulative())

    def _close(self) -> None:
        start, progress, before = self._since
        record = self.records.get(self._key)
        if record is None:
            record = self.records[self._key] = _Record(list(before))
        sums = record.whole if self._whole else record.part
        self._whole = False
        sums.time += self.device.env.now - start
        sums.progress += self._progress_now() - progress
        for local, after in self._cumulative().items():
            work = sums.work[local]
            for i, (a, b) in enumerate(zip(after, before[local])):
                work[i] += a - b

    def _on_change(self, before: bool) -> None:
        # Domain listener: a change of state splits the running kernel-level
        # segment (the processors have settled their integrals at the old OPP),
        # and ends any steady spell.
        if not before:
            self._calm_since = self.device.env.now
            self.steady = False
            self._changed = True
        if self._skip is None or before:
            return
        if self.key(self._skip) != self._key:
            self._close()
            self._open()

    # -- steady state -----------------------------------------------------
    def _watch(self, node_power: np.ndarray, temps: np.ndarray) -> None:
        """Device tick hook: decide whether the device is steady and pick the
        sampler's stride accordingly (only while replaying)."""
        device = self.device
        changed, self._changed = self._changed, False
        if not device.replaying:
            self._calm_since = device.env.now
            self.steady = False
            self.cycles.clear()
            return
        if self._replay is not None and self._cycle(temps, changed):
            device.stride = self.stride
            self.steady = False
            return
        steady = False
        if device.env.now - self._calm_since >= _QUIET_S:
            fixed = self._inverse.dot(node_power) + device.thermal.ambient
            steady = (float(np.abs(fixed - temps).max()) < _GAP_K
                      and all((temps[sensor] > limit) == (fixed[sensor] > limit)
                              for sensor, limits in self._trips for limit in limits))
        self.steady = steady
        big = self.steady_stride  # the next steps land on multiples of it
        ahead = big - device._ticks % big
        if steady:
            device.stride = ahead
            self._coarse = True
            return
        # Between crossings: a long step (up to the sample grid, at most
        # _MAX_POLLS polls) if the polls it replaces are no-ops; not after a tick
        # with a change (that tick drew the old state's power).
        ahead = self._lookahead.longest(ahead)
        if (not changed and ahead > self.stride and device._ticks % self.stride == 0
                and self._lookahead.clear(ahead, node_power)):
            device.stride = ahead
            self._coarse = True
        else:  # one poll, ending on the poll grid
            device.stride = self.stride - device._ticks % self.stride

    # -- limit cycles -----------------------------------------------------
    def _cycle(self, temps: np.ndarray, changed: bool) -> bool:
        """Log a tick of one-by-one replay; at a mark, leap over whole periods if
        the state is periodic (:mod:`simulator.engine.limit_cycle`). Returns
        whether it leapt."""
        device, replay = self.device, self._replay
        progress = self._completed + replay.progress_now()
        self.cycles.append(device._ticks, device.env.now, progress, temps.tolist(),
                           device.energy.values(), device.levels())
        if not changed:
            return False
        state = (tuple((d.index, d.cap, d.requested) for d in device.domains.values()),
                 tuple(device.trip_governor.caps.values())
                 if device.trip_governor is not None else ())
        start = self.cycles.mark(state)
        return start is not None and self._leap(start, progress)

    def _leap(self, start: int, progress: float) -> bool:
        """Skip as many whole periods (from row ``start`` to now) as the job's budget
        and the next foreign event allow: move the clock, account the device,
        credit the iterations completed meanwhile to the replay in progress."""
        replay, env = self._replay, self.device.env
        replay.decide()  # a state with no record met at this mark's poll
        if replay.progress_now() >= 1.0 or replay.done.triggered:
            return False  # (an iteration about to end: its timer ends it first)
        now = env.now
        # Everything but this replay's own timers bounds the leap, so the rest of
        # the simulation sees no difference.
        horizon = _horizon(env, self)
        budget = replay.budget()

        def periods_for(period: float, gain: float, progress_now: float) -> int:
            fraction = progress_now - math.floor(progress_now)
            # one period short of the next foreign event: the leap must end before it
            # so that event fires in a period simulated tick by tick
            by_horizon = (horizon - now) / period - 1.0
            return int(min((budget - fraction) / gain, by_horizon))

        leap = self.cycles.extrapolate(start, periods_for, self.device.sample_every)
        if leap is None:
            return False
        _jump(env, self, now + leap.time)
        self.device.leap(leap.time, leap.ticks, leap.energy, leap.samples)
        completed = len(leap.ends)
        replay.leap(leap.ends, progress + leap.progress - self._completed - completed)
        self._completed += completed
        self.replayed += completed
        self.leaps += 1
        self.leaped += leap.time
        self._calm_since = env.now
        self.cycles.clear()
        return True

    def boundary(self) -> None:
        """A power-change point (a block ends, a pause or a kernel-level iteration
        starts): after coarse sampler steps, settle the device's energy and heat up
        to now so that what follows is accounted apart (:meth:`Device.settle`)."""
        self.cycles.clear()
        if self._coarse:
            self.device.settle()
            self._coarse = False

    def replay_block(self, skips: list[frozenset], state, watchers: list | None = None):
        """SimPy generator (``yield from``): replay one known iteration per entry of
        ``skips`` (rows skipped by each) back to back, at the current state.

        Args:
            state: the job's compiled plan.
            watchers: the job's :attr:`RunControl.watchers`: a policy's change of the
                run (suspend, stop, abort, reshare, replan: a new plan's rates are not
                the record's) ends the block like a cap change.

        Returns:
            ``(ends, cut)`` as :meth:`replay`'s: the end time (s) of each replayed
            iteration, fewer than ``skips`` when a cap or OPP changed or a policy
            changed the run during the block (it ends after the iteration in
            progress then, at the block's rates, if the state it changed to is known;
            else at once, the rest of that iteration at kernel level).
        """
        device = self.device
        env = device.env
        self.cycles.clear()
        dvfs = device.dvfs_state()
        counts = Counter(skips)
        records = {skip: self.records[(dvfs, skip)] for skip in counts}
        records = {skip: record.best() for skip, record in records.items()}
        per_iteration = {skip: r.time / r.progress for skip, r in records.items()}  # s
        start = env.now
        ends = list(accumulate((per_iteration[skip] for skip in skips), initial=start))[1:]
        total = sum(per_iteration[skip] * n for skip, n in counts.items())
        # Held rates: the block's work (each iteration's recorded work, summed) over
        # its time. Per iteration a record's work is its totals over its progress.
        for local, proc in device.processors.items():
            work = [0.0, 0.0, 0.0, 0.0]
            for skip, n in counts.items():
                record = records[skip]
                for i, value in enumerate(record.work[local]):
                    work[i] += n * value / record.progress
            proc.hold(*(value / total for value in work))
        device.replaying = True
        done = env.event()
        last = [len(ends)]  # iterations the block will complete
        cut: list = [None, False]  # where it entered an unknown state; a decide() pending

        def finish(_event) -> None:
            if not done.triggered:
                done.succeed()

        def on_change(before: bool) -> None:
            if before or done.triggered:
                return
            running = bisect.bisect_right(ends, env.now)  # iterations done by now
            if running + 1 < last[0]:
                last[0] = running + 1
                env.timeout(max(0.0, ends[running] - env.now)).callbacks.append(finish)
            if not cut[1]:  # decide once every domain the poll moves has moved
                cut[1] = True
                env.timeout(0.0).callbacks.append(decide)

        def decide(_event) -> None:
            # as _Replay.decide: a state with no record ends the block here
            cut[1] = False
            running = bisect.bisect_right(ends, env.now)
            if done.triggered or running >= last[0] or self.known(self.key(skips[running])):
                return
            began = ends[running - 1] if running else start
            progress = (env.now - began) / per_iteration[skips[running]]
            if progress < 1.0:
                last[0] = running
                cut[0] = self.resume_point(state, skips[running], progress)
                done.succeed()

        def on_control() -> None:
            on_change(False)

        env.timeout(ends[-1] - start).callbacks.append(finish)
        for domain in device.domains.values():
            domain.listeners.append(on_change)
        watchers = [] if watchers is None else watchers
        watchers.append(on_control)
        yield done
        watchers.remove(on_control)
        for domain in device.domains.values():
            domain.listeners.remove(on_change)
        for proc in device.processors.values():
            proc.release()
        device.replaying = False
        self.boundary()
        count = last[0]
        self.replayed += count
        if cut[0] is not None:
            return ends[:count], cut[0]
        return [*ends[:count - 1], env.now], None

    # -- replay -----------------------------------------------------------
    def replay(self, key: tuple, state, budget: Callable[[], int]):
        """SimPy generator (``yield from``): one iteration at the recorded rates (and
        the whole periods of a limit cycle, if one is recognised meanwhile).

        Args:
            key: the iteration's state (:meth:`key`), known.
            state: the job's compiled plan (its rows and their weights).
            budget: how many iterations after the current one a leap may complete
                now (same skipped rows, no pause between; 0: none).

        Returns:
            ``(ends, cut)``: the end time (s) of every iteration completed (more
            than one if a leap skipped whole periods) and None; or, if the
            iteration entered a state with no record, the ends of those a leap
            completed and where the one in progress got to
            (:meth:`resume_point`): the job runs the rest at kernel level, from now.
        """
        device = self.device
        device.stride = self.stride
        device.replaying = True
        if key[1] != self._cycle_skip:  # other rates: the log is about other iterations
            self.cycles.clear()
            self._cycle_skip = key[1]
        replay = self._replay = _Replay(self, key, state, budget)
        for domain in device.domains.values():
            domain.listeners.append(replay.on_change)
        yield replay.done
        for domain in device.domains.values():
            domain.listeners.remove(replay.on_change)
        for proc in device.processors.values():
            proc.release()
        device.replaying = False
        self._replay = None
        if replay.cut is not None:
            return replay.ends, replay.cut
        self.replayed += 1
        return [*replay.ends, device.env.now], None

    def resume_point(self, state, skip: frozenset,
                     progress: float) -> tuple[frozenset, dict[int, float]]:
        """Where kernel level takes over an iteration cut ``progress`` (iterations)
        into its replay: the rows done and the done fraction of each row running
        (:meth:`Schedule.at`; without a schedule, the rows in order while their
        weights add up to at most ``progress``, and the next part-way)."""
        schedule = self.schedule(state, skip)
        if schedule is not None:
            return schedule.at(progress)
        weights, total = self.weights(state, skip), 0.0
        done: list[int] = []
        for row in range(len(weights)):
            if row in skip:
                continue
            if total + weights[row] > progress:
                return frozenset(done), {row: (progress - total) / weights[row]}
            total += weights[row]
            done.append(row)
        return frozenset(done), {}

    def rebase(self) -> None:
        """Open the segment again now: a resumed iteration's running kernels start
        part-way, and what they did before is not the segment's work."""
        self._open()

    def _cumulative(self) -> dict[str, tuple[float, float, float, float]]:
        return {local: proc.cumulative() for local, proc in self.device.processors.items()}

    def _progress_now(self) -> float:
        """Completed work plus the done fraction of the job's running kernels."""
        now, weights, total = self.device.env.now, self.current, self.progress
        for proc in self.device.processors.values():
            for task in proc.running:
                meta = task.meta
                if meta and meta[0] == self.job and meta[2] < len(weights):
                    done = task.done + (now - task.t_last) * task.rate
                    total += weights[meta[2]] * (done if done < 1.0 else 1.0)
        return total


class _Replay:
    """One replayed iteration in progress: its progress, re-timed on state changes,
    cut when it enters a state with no record."""

    def __init__(self, ff: FastForward, key: tuple, state, budget: Callable[[], int]):
        self.ff = ff
        self.skip = key[1]
        self.state = state
        self.budget = budget
        self.env = ff.device.env
        self.done = self.env.event()
        self.progress = 0.0
        self.generation = 0
        self.ends: list[float] = []  # iterations a leap completed (s)
        self.cut: tuple | None = None  # where it entered an unknown state (resume_point)
        self._deciding = False  # a decide() is pending
        self._apply(ff.records[key])

    def _apply(self, record: _Record) -> None:
        best = record.best()
        self.rate = best.progress / best.time  # iterations per second
        self.t_last = self.env.now
        for local, rates in record.rates().items():
            self.ff.device.processors[local].hold(*rates)
        self._arm()

    def _arm(self) -> None:
        """A timer for the end of the iteration at the current rate (earlier ones
        go stale)."""
        self.generation += 1
        generation = self.generation
        timer = self.env.timeout(max(0.0, (1.0 - self.progress) / self.rate))
        timer.ff_owner = self.ff  # an own event: a leap moves it (FastForward._leap)
        timer.callbacks.append(lambda _event: self._finish(generation))

    def _finish(self, generation: int) -> None:
        if generation == self.generation and not self.done.triggered:
            self.done.succeed()
            self.ff._completed += 1

    def progress_now(self) -> float:
        """The share of the iteration done (0 once it is done: it counts as completed)."""
        if self.done.triggered:
            return 0.0
        progress = self.progress + (self.env.now - self.t_last) * self.rate
        return progress if progress < 1.0 else 1.0

    def leap(self, ends: list[float], progress: float) -> None:
        """Whole periods were skipped (:meth:`FastForward._leap`): iterations ending
        at ``ends`` were completed, and ``progress`` of the current one is done."""
        self.ends.extend(ends)
        self.progress = min(max(progress, 0.0), 1.0)
        self.t_last = self.env.now
        self._arm()

    def on_change(self, before: bool) -> None:
        """Domain listener: settle progress before an OPP change; after it, go on at
        the new state's rates, or, if the state has no record, decide once every
        domain the same poll moves has moved (:meth:`decide`)."""
        if self.done.triggered:
            return
        if before:
            now = self.env.now
            self.progress = min(1.0, self.progress + (now - self.t_last) * self.rate)
            self.t_last = now
            return
        key = self.ff.key(self.skip)
        if self.ff.known(key):
            self._apply(self.ff.records[key])
        elif not self._deciding:
            # A poll moves domains one at a time (a trip caps two clusters): the
            # state between is no state the device runs in, the one after may be
            # known. The event runs after the poll, at the same time.
            self._deciding = True
            event = self.env.timeout(0.0)
            event.ff_owner = self.ff  # a leap decides first (FastForward._leap)
            event.callbacks.append(self.decide)

    def decide(self, _event=None) -> None:
        """After a poll that left the replay in a state with no record: go on at the
        state's rates if it has one now, else end the replay here: holding the old
        state's rates would be a guess, so kernel level takes over the rest of the
        iteration (:meth:`FastForward.resume_point`)."""
        if not self._deciding:  # decided already (by a leap)
            return
        self._deciding = False
        if self.done.triggered:
            return
        ff, key = self.ff, self.ff.key(self.skip)
        if ff.known(key):
            self._apply(ff.records[key])
        elif self.progress < 1.0:  # (else its timer ends it now)
            self.cut = ff.resume_point(self.state, self.skip, self.progress)
            self.done.succeed()
