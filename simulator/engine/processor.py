"""A processor at run time: queue, units, running kernels, power accounting.

Kernels ask for ``units`` units (cores, HVX contexts) and a ``share`` of each
(processor sharing among tenants; 1 for exclusive use). A kernel holds
``units * share`` of the processor's capacity and progresses at ``share``
times its stand-alone speed. Ready kernels wait in priority order; the head of
the queue starts as soon as it fits (no overtaking, so no starvation). A
task may belong to a *stream* (a software thread, e.g. a packing thread):
tasks of one stream run one at a time, in priority order, and a task whose
stream is busy steps aside so that other tasks can start.

Progress is tracked as the fraction of work done, not as an end time, so an
OPP change during a kernel re-times only what is left. Completion events made
stale by a re-timing are ignored through a per-task generation counter, which
is cheaper than interrupting SimPy processes. The same re-timing serves a
share changed at run time (:meth:`Processor.reshare`); a killed job's tasks are
withdrawn with :meth:`Processor.cancel`.

Power is integrated exactly: the processor keeps its current dynamic power,
busy units and DRAM byte rate (all piecewise constant between events) and adds
``value * dt`` to running integrals at every change. The sampler reads and
resets those integrals once per thermal step.

Fast-forward (:mod:`simulator.engine.fast_forward`) replaces a whole iteration
of kernels by a *hold*: constant average rates (dynamic power, busy units,
busiest-core utilisation, DRAM bytes) measured on an earlier, kernel-level
iteration, added to the integrals for as long as the hold lasts.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

import simpy

from ..hardware.cost import KernelCost
from ..spec.soc import ProcessorSpec
from .dvfs import FrequencyDomain
from .queued_event import NORMAL as _NORMAL
from .queued_event import QueuedEvent

_NO_HOLD = (0.0, 0.0, 0.0, 0.0)  # a processor's ``_held`` when nothing is held


class Task:
    """One kernel placed on a processor (internal to the engine); without a cost,
    a stand-in for a held frame (:meth:`Processor.occupy`)."""

    __slots__ = ("label", "cost", "units", "share", "priority", "need", "on_done",
                 "start", "done", "rate", "t_last", "gen", "power", "dram_rate",
                 "lanes", "meta", "stream")

    def __init__(self, label: str, cost: KernelCost | None, units: int, share: float,
                 priority: float, on_done: Callable[[Task], None], meta: object = None,
                 stream: object = None):
        self.label = label
        # Tasks of one stream (a software thread) run one at a time on this processor.
        self.stream = stream
        self.cost = cost
        self.units = units
        self.share = share
        self.priority = priority
        self.need = units * share
        self.on_done = on_done
        self.meta = meta
        self.start = -1.0
        self.done = 0.0
        self.rate = 0.0
        self.t_last = 0.0
        self.gen = 0
        self.power = 0.0
        self.dram_rate = 0.0
        self.lanes: tuple[int, ...] = ()


class Processor:
    """Executes tasks on the units of one processor.

    (CPython 3.11 shares one key table among instances of a class only while
    they have fewer than 30 attributes; from 30 on every attribute read on the
    hot path is slower, ~5 % of a run. The instance keeps 28: constants read only
    when a kernel's timing is first computed stay on ``spec``.)

    Args:
        env: the SimPy environment.
        name: dotted name (``cpu.gold``); prefixed with the device on multi-device systems.
        spec: the processor description.
        domain: its frequency domain.
        record: callable receiving each finished task (for tidy records).
    """

    def __init__(self, env: simpy.Environment, name: str, spec: ProcessorSpec,
                 domain: FrequencyDomain, record: Callable[[Processor, Task, float], None]):
        self.env = env
        self.name = name
        self.spec = spec
        self.domain = domain
        self.capacity = float(spec.units)
        self.free = self.capacity
        self.free_lanes = list(range(spec.units))
        self._queue: list[tuple[float, int, Task]] = []
        self._streams: set = set()  # streams with a running task
        self._parked: dict[object, list[tuple[float, int, Task]]] = {}  # waiting for theirs
        # no queued task starts while set: a pipeline's fast-forward holds the
        # processor's running kernels aside (simulator.engine.pipeline)
        self.frozen = False
        self._seq = 0
        self.running: list[Task] = []
        self._record = record
        # (id(cost), OPP index, share, units) -> (cost, s, 1/s, W, B/s): see _time
        self._timings: dict[tuple, tuple] = {}
        # piecewise-constant rates and their integrals since the last sample
        self.power = 0.0  # W, dynamic
        self.busy = 0.0  # busy units (shares count fractionally)
        self.dram_rate = 0.0  # B/s
        self._t = env.now
        self.energy_dynamic = 0.0  # J
        self.busy_time = 0.0  # unit-seconds
        self.max_core_busy = 0.0  # seconds the busiest core was busy (schedutil's signal)
        self.dram_bytes = 0.0  # B
        # a fast-forward hold: (W, busy units, busiest-core fraction, B/s)
        self._held = _NO_HOLD
        self._profiles: list[list] = []  # stand-ins' draws (occupy)
        # called when a task waits beside a stand-in (it would wait for the held
        # frame's kernels at kernel level, or they for it: simulator.engine.tenant
        # cuts the frame)
        self.queue_watchers: list[Callable[[], None]] = []
        # what take_integrals handed out so far (J, unit-s, s, B)
        self._taken = [0.0, 0.0, 0.0, 0.0]
        # Whether the integrals may be non-zero: set when a kernel starts or rates
        # are held (the only ways a rate becomes non-zero), cleared when the device
        # takes them (take_integrals) from a processor that runs and holds nothing. While
        # False every integral is exactly 0.0 and stays so (the rates are 0.0:
        # :meth:`_release` resets them when the last kernel leaves), so the
        # device's integration skips the processor (Device._collect).
        self.stirred = False
        domain.listeners.append(self._on_frequency)

    # -- accounting -------------------------------------------------------
    def settle(self) -> None:
        """Bring the integrals up to ``env.now``."""
        now = self.env._now
        dt = now - self._t
        if dt > 0:
            held_power, held_busy, held_core, held_dram = self._held
            self.energy_dynamic += (self.power + held_power) * dt
            self.busy_time += (self.busy + held_busy) * dt
            # Linux schedutil follows the busiest CPU of a policy; a kernel's
            # share < 1 keeps its unit busy only that fraction of the time.
            self.max_core_busy += ((self.busy if self.busy < 1.0 else 1.0) + held_core) * dt
            self.dram_bytes += (self.dram_rate + held_dram) * dt
            self._t = now

    def take_integrals(self) -> tuple[float, float, float, float]:
        """Return and reset (dynamic energy J, busy unit-seconds, busiest-core
        busy seconds, DRAM bytes)."""
        self.settle()
        if self._profiles:
            self._draw_profiles()
        out = (self.energy_dynamic, self.busy_time, self.max_core_busy, self.dram_bytes)
        self.energy_dynamic = self.busy_time = self.max_core_busy = self.dram_bytes = 0.0
        taken = self._taken  # unrolled: every stirred processor, every integration
        taken[0] += out[0]
        taken[1] += out[1]
        taken[2] += out[2]
        taken[3] += out[3]
        if not self.running and self._held is _NO_HOLD:
            self.stirred = False  # zero integrals and rates until a kernel starts
        return out

    def take_core_busy(self) -> float:
        """Return and reset only the busiest-core busy seconds (a governor's
        signal between two thermal integrations: the other integrals stay for
        the next :meth:`take_integrals`)."""
        if not self.running and self._held is _NO_HOLD and self.max_core_busy == 0.0:
            return 0.0  # quiet: nothing accrued (the rates are zero), nothing to settle
        self.settle()
        core = self.max_core_busy
        self.max_core_busy = 0.0
        self._taken[2] += core
        return core

    def cumulative(self) -> tuple[float, float, float, float]:
        """(dynamic energy J, busy unit-seconds, busiest-core busy seconds, DRAM
        bytes) since the start of the run, up to ``env.now``."""
        self.settle()
        if self._profiles:
            self._draw_profiles()
        taken = self._taken
        return (taken[0] + self.energy_dynamic, taken[1] + self.busy_time,
                taken[2] + self.max_core_busy, taken[3] + self.dram_bytes)

    def peek(self) -> tuple[float, float, float, float]:
        """:meth:`cumulative` without settling (a pure read: watching a run for
        steady state must not change its float sums)."""
        dt = self.env._now - self._t
        held_power, held_busy, held_core, held_dram = self._held
        busy = self.busy
        taken = self._taken
        joules, nbytes = self.energy_dynamic, self.dram_bytes
        for _stand_in, profile, start, (drawn_joules, drawn_bytes) in self._profiles:
            joules_now, bytes_now = profile.at(self.env._now - start)
            joules += joules_now - drawn_joules
            nbytes += bytes_now - drawn_bytes
        return (taken[0] + joules + (self.power + held_power) * dt,
                taken[1] + self.busy_time + (busy + held_busy) * dt,
                taken[2] + self.max_core_busy + ((busy if busy < 1.0 else 1.0) + held_core) * dt,
                taken[3] + nbytes + (self.dram_rate + held_dram) * dt)

    def hold(self, power: float, busy: float, core_busy: float, dram_rate: float) -> None:
        """Add constant rates until :meth:`release` (fast-forward replay).

        Args:
            power: dynamic power (W).
            busy: busy units (leakage, utilisation).
            core_busy: fraction of time the busiest unit is busy (schedutil's signal).
            dram_rate: DRAM traffic (B/s).
        """
        self.settle()
        self._held = (power, busy, core_busy, dram_rate)
        self.stirred = True

    def release(self) -> None:
        """End a :meth:`hold`."""
        self.settle()
        self._held = _NO_HOLD

    def skip_to(self, now: float) -> None:
        """Fast-forward skipped the time up to ``now`` (s), accounted elsewhere
        (:meth:`Device.leap`): the integrals start again from there."""
        self._t = now

    # -- queueing ---------------------------------------------------------
    def submit(self, task: Task) -> None:
        """Queue a ready task; it starts when it reaches the head and fits."""
        if task.need > self.capacity + 1e-9:
            raise ValueError(f"{task.label} needs {task.need:g} units but {self.name} "
                             f"has {self.capacity:g}")
        self._seq += 1
        if (not self._queue and task.need <= self.free + 1e-9 and not self.frozen
                and (task.stream is None or task.stream not in self._streams)):
            # Nothing waits and it fits: what the queue would do at once (the
            # common case of a chain), without the heap.
            self._start(task)
            return
        heapq.heappush(self._queue, (task.priority, self._seq, task))
        self._dispatch()

    def start_now(self, task: Task) -> None:
        """Start ``task`` at once, before anything queued: a kernel that was running
        at kernel level (the running rows of a held frame cut part-way)."""
        self._seq += 1
        self._start(task)

    def _dispatch(self) -> None:
        if self.frozen:
            return
        queue = self._queue
        while queue:
            task = queue[0][2]
            if task.stream is not None and task.stream in self._streams:
                # its thread is busy: park it (others may overtake it meanwhile)
                heapq.heappush(self._parked.setdefault(task.stream, []), heapq.heappop(queue))
                continue
            if task.need > self.free + 1e-9:
                break
            heapq.heappop(queue)
            self._start(task)
        if queue and self.queue_watchers:
            # a task waits beside a stand-in (submitted, or a thread's parked task
            # queued again by _release): at kernel level the held frame's next
            # kernel would wait behind it
            for watcher in list(self.queue_watchers):
                watcher()

    @property
    def queued(self) -> int:
        return len(self._queue)

    # -- execution --------------------------------------------------------
    def _start(self, task: Task) -> None:
        self.settle()
        if task.stream is not None:
            self._streams.add(task.stream)
        need = task.need
        self.free -= need
        self.busy += need
        self.stirred = True
        free_lanes, units = self.free_lanes, task.units
        if task.share >= 1.0 and len(free_lanes) >= units:
            task.lanes = tuple(free_lanes[:units])
            del free_lanes[:units]
        task.start = task.t_last = self.env._now
        self.running.append(task)
        self._time(task)

    def _time(self, task: Task) -> None:
        """(Re)compute a running task's speed, power and completion event."""
        # Inlined KernelCost.duration/activity: this runs once per kernel start
        # and per OPP change, the engine's hottest path. The result depends only
        # on the cost, the OPP, the share and the units, and a long run repeats
        # the same few kernels at the same few OPPs: it is memoised (the entry
        # holds the cost, so its id is not reused while the entry lives).
        domain = self.domain
        cost = task.cost
        key = (id(cost), domain.index, task.share, task.units)
        timing = self._timings.get(key)
        if timing is None:
            freq = domain.frequencies[domain.index]  # domain.frequency, without the property
            compute = cost.compute_cycles / freq
            scaled = cost.cycles / freq
            busy = scaled if scaled > cost.fixed else cost.fixed
            total = busy + cost.overhead
            if total <= 0.0:
                total = 1e-15
            if compute > total:
                compute = total
            power_spec = self.spec.power
            stall = power_spec.stall_activity if cost.wait_activity is None else cost.wait_activity
            activity = (compute * cost.compute_activity + stall * (total - compute)) / total
            duration = total / task.share
            rate = 1.0 / duration
            volt = domain.voltages[domain.index]
            power = power_spec.ceff * volt * volt * freq * activity * task.units * task.share
            timing = self._timings[key] = (cost, duration, rate, power,
                                           cost.dram_bytes * rate)
        _, duration, task.rate, power, dram_rate = timing
        self.power += power - task.power
        self.dram_rate += dram_rate - task.dram_rate
        task.power, task.dram_rate = power, dram_rate
        task.gen += 1
        remaining = (1.0 - task.done) * duration
        # What Timeout(env, remaining) does, with the completion as the event
        # itself (see queued_event)
        env = self.env
        event = _Completion(env, env._now + (remaining if remaining > 0.0 else 0.0), _NORMAL,
                            _fire)
        event.processor, event.task, event.gen = self, task, task.gen

    def _finish(self, task: Task) -> None:
        self._release(task)
        self._record(self, task, self.env._now)
        task.on_done(task)
        if self._queue:
            self._dispatch()

    def _release(self, task: Task) -> None:
        """Take a running task off the units (finished or cancelled)."""
        self.settle()
        running = self.running
        running.remove(task)
        if not running:  # avoid drift from float sums
            self.power = self.dram_rate = self.busy = 0.0
            self.free = self.capacity
        else:
            need = task.need
            self.free += need
            busy = self.busy - need
            self.busy = 0.0 if -1e-12 < busy < 1e-12 else busy  # abs(busy) < 1e-12
            self.power -= task.power
            self.dram_rate -= task.dram_rate
        if task.lanes:
            free_lanes = self.free_lanes
            free_lanes.extend(task.lanes)
            if len(free_lanes) > 1:
                free_lanes.sort()
        if task.stream is not None:
            self._streams.discard(task.stream)
            parked = self._parked.get(task.stream)
            if parked:  # the thread's next task queues again
                heapq.heappush(self._queue, heapq.heappop(parked))

    def occupy(self, stand_in: Task, profile) -> None:
        """Run ``stand_in`` until :meth:`vacate`: a task without a cost that holds
        its ``need`` units as a running kernel does, with no completion and no
        record, and draws the dynamic energy and DRAM bytes ``profile.at(t)``
        gives from now to ``t`` s later (a held frame of a tenant:
        :mod:`simulator.engine.tenant`). An OPP change does not re-time it."""
        self.settle()
        self.free -= stand_in.need
        self.busy += stand_in.need
        self.stirred = True
        free_lanes, units = self.free_lanes, stand_in.units
        if stand_in.share >= 1.0 and len(free_lanes) >= units:  # whole cores, as _start
            stand_in.lanes = tuple(free_lanes[:units])  # (other tenants' records)
            del free_lanes[:units]
        stand_in.start = stand_in.t_last = self.env._now
        self.running.append(stand_in)
        # [stand-in, profile, its start s, (J, B) drawn into the integrals so far]
        self._profiles.append([stand_in, profile, stand_in.start, (0.0, 0.0)])

    def vacate(self, stand_in: Task, dispatch: bool = True) -> None:
        """End :meth:`occupy`: add what it drew up to now, free its units (queued
        tasks may start, unless not ``dispatch``: a cut frame's running kernels
        start first, as they were running)."""
        self._draw_profiles()
        self._profiles = [entry for entry in self._profiles if entry[0] is not stand_in]
        self._release(stand_in)
        if dispatch:
            self._dispatch()

    def _draw_profiles(self) -> None:
        """Add to the integrals what the stand-ins drew since they last did (at
        every take and at the end: between them nobody reads the integrals)."""
        now = self.env._now
        for entry in self._profiles:
            _stand_in, profile, start, (joules, nbytes) = entry
            joules_now, bytes_now = profile.at(now - start)
            self.energy_dynamic += joules_now - joules
            self.dram_bytes += bytes_now - nbytes
            entry[3] = (joules_now, bytes_now)

    def reprioritise(self) -> None:
        """Re-sort the waiting tasks after their ``priority`` changed (a pipeline's
        leap renumbered the frames in flight)."""
        for queue in (self._queue, *self._parked.values()):
            queue[:] = [(task.priority, seq, task) for _priority, seq, task in queue]
            heapq.heapify(queue)

    # -- run-time control (see simulator.engine.control) --------------------
    def cancel(self, task: Task) -> None:
        """Withdraw a queued or running task without completing it (its job was
        killed): it frees its units at once, is not recorded, and its ``on_done``
        never runs."""
        if task in self.running:
            task.gen += 1  # its pending completion event becomes stale
            self._release(task)
        else:
            for queue in (self._queue, *self._parked.values()):
                for i, entry in enumerate(queue):
                    if entry[2] is task:
                        queue[i] = queue[-1]
                        queue.pop()
                        heapq.heapify(queue)
                        break
        self._dispatch()

    def reshare(self, task: Task, share: float) -> None:
        """Change the share of a queued or running task (processor sharing
        re-negotiated at run time). A running task keeps the work it has done
        and only what is left is re-timed, as on an OPP change; a larger share
        may over-commit the processor for a moment, in which case no new task
        starts until enough units are free."""
        if not 0.0 < share <= 1.0:
            raise ValueError(f"share must be in (0, 1]; got {share!r}")
        if task in self.running:
            self.settle()
            now = self.env.now
            task.done = min(1.0, task.done + (now - task.t_last) * task.rate)
            task.t_last = now
            need = task.units * share
            self.free -= need - task.need
            self.busy += need - task.need
            task.share, task.need = share, need
            self._time(task)
            if self.free < -1e-9 and self.queue_watchers:  # over-committed beside a
                for watcher in list(self.queue_watchers):  # stand-in: its frame's next
                    watcher()  # kernel would wait at kernel level
        else:
            task.share, task.need = share, task.units * share
        self._dispatch()

    def _on_frequency(self, before: bool) -> None:
        if before:
            self.settle()
            now = self.env.now
            for task in self.running:
                task.done = min(1.0, task.done + (now - task.t_last) * task.rate)
                task.t_last = now
        else:
            for task in self.running:
                if task.cost is not None:  # (a stand-in keeps its rates: occupy)
                    self._time(task)


def _fire(event: _Completion) -> None:
    """SimPy callback of a completion: finish the task unless it was re-timed since."""
    if event.task.gen == event.gen:
        event.processor._finish(event.task)


class _Completion(QueuedEvent):
    """A kernel's completion event, bound to a task generation (stale ones do
    nothing); queued by :meth:`Processor._time`."""

    __slots__ = ("processor", "task", "gen")
