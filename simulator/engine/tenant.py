"""Tenant fast-forward: hold the steady frames of a job that shares its device.

Several apps sharing one processor (NestDNN's tenants) run frames back to back,
each at its share of the units; a minute of such a run is ~750 k kernels, and
the apps are not alone on their device, so the replay of
:mod:`simulator.engine.fast_forward` (which measures the whole device) does not
apply. Under processor sharing, though, a kernel's speed depends only on its
cost, the OPP, its share and its units (:class:`Processor`): as long as none of
these changes and no kernel of the job waits for units, every frame of the job
repeats the one before, whatever the other tenants do.

A job with ``fast_forward`` that shares its device is therefore *watched*: each
kernel-level frame's kernels are logged (:meth:`TenantForward.watch`), and a
frame is a *template* when

* no kernel waited: each started when its last predecessor ended (or at the
  frame's start), so the other tenants did not delay it;
* none was re-timed, no policy changed the run (suspend, stop, abort, share,
  plan) and no OPP of the job's processors changed while it ran;
* on each processor its kernels hold the same units from the frame's start to
  its end (a chain with one placement does; a frame over two processors, each
  idle while the other works, or uneven parallel branches do not): only then is
  a stand-in holding constant units what the other tenants, leakage and a
  governor's utilisation (the busiest core's, ``min(busy, 1)``: not linear) see;
* the plan has no skipped rows, no ``adapt`` callback and moves no data (no
  transfer: a link's timing is not the job's alone); and
* its kernels' start and end offsets equal the previous frame's within
  :data:`_TOLERANCE_S`, under the same *signature* (the plan, the shares set
  at run time, the OPP index of every processor the job uses).

A frame that starts under the template's signature, on processors with nothing
queued and its units free, is then *held*: on every processor the job uses, one
stand-in task occupies the frame's units
and draws the dynamic energy and DRAM traffic its kernels drew, as they drew it
over the frame (:class:`Profile`, :meth:`Processor.occupy`: the sampler
integrates them, leakage and the governors' utilisation see the units, other
tenants find them taken), and the frame ends after the template's period. One
event per frame replaces one per kernel.

The hold is cut, at the moment it happens, when the signature changes (an OPP
change on one of the job's processors, a share set at run time) or when another
task has to queue on a processor a stand-in holds, or another tenant's larger
share over-commits it (at kernel level one of them would wait for the other).
The stand-ins leave and the frame goes on at kernel level from the point the
template had reached (rows done, the fraction done of each running row:
:meth:`_Template.resume_point`), under its own plan: its running kernels start
again at once, before what queued (they were running), so the rest of the frame
is timed as kernel level times it. A frame aborted while held is dropped at
once; a new plan, a suspend or a stop leave the frame in progress as it is
(they act on the next frames).

What differs from kernel level: held frames leave no kernel records (a policy
whose metrics read them sees only the kernel-level frames). Energy, DRAM
traffic, temperatures, frame counts and frame times follow kernel level's to
the float rounding of a period (``tests/test_tenant_forward.py``,
``tests/test_tenant_cases.py``).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import simpy

from .processor import Processor, Task

# s: two frames are alike when every kernel starts and ends within this of the
# same offset (float rounding of sums of kernel durations; a kernel that waited
# for units, or ran at another OPP, is off by far more)
_TOLERANCE_S = 1e-9
# steady frames kept per job (different OPPs, shares, plans); past it they are
# forgotten and learnt again (two kernel-level frames each)
_TEMPLATES = 32
# s: a kernel "started when its predecessors ended" within this (the same
# float time in practice: the successor is released by the predecessor's end)
_STARTED_AT_ONCE_S = 1e-12


@dataclass
class _Template:
    """A steady kernel-level frame: what a held frame repeats.

    Attributes:
        signature: the plan, the run-time shares and the OPP indices it ran under.
        period: the frame's length (s).
        offsets: ``(row, start, end)`` of each kernel, from the frame's start (s).
        kernels: per processor, ``(start, end, units held, power W, DRAM B/s,
            (units, share))`` of each of its kernels (offsets in s).
    """

    signature: tuple
    period: float
    offsets: list[tuple[int, float, float]]
    kernels: dict[Processor, list[tuple[float, float, float, float, float]]]
    _profiles: dict | None = None

    def alike(self, other: _Template) -> bool:
        """Whether ``other`` is the same frame (same signature, kernels at the
        same offsets within :data:`_TOLERANCE_S`)."""
        if self.signature != other.signature or len(self.offsets) != len(other.offsets):
            return False
        return all(row == row_ and abs(start - start_) <= _TOLERANCE_S
                   and abs(end - end_) <= _TOLERANCE_S
                   for (row, start, end), (row_, start_, end_)
                   in zip(self.offsets, other.offsets))

    def profiles(self) -> dict[Processor, tuple[tuple[int, float], Profile]]:
        """Per processor: the placement its kernels hold over the frame (units and
        share: the same for all of them, or 1 unit at their constant need) and
        their power and DRAM traffic over time (made once, when first held)."""
        if self._profiles is None:
            self._profiles = {}
            for proc, kernels in self.kernels.items():
                placements = {placement for *_rest, placement in kernels}
                placement = (placements.pop() if len(placements) == 1
                             else (1, kernels[0][2]))  # (the need is constant)
                self._profiles[proc] = (placement, Profile(kernels, self.period))
        return self._profiles

    def resume_point(self, elapsed: float) -> tuple[frozenset[int], dict[int, float]]:
        """Where a frame held for ``elapsed`` s stands: the rows done and the
        fraction done of each row running (what :meth:`JobRunner._iteration`
        resumes from)."""
        done, running = [], {}
        for row, start, end in self.offsets:
            if end <= elapsed:
                done.append(row)
            elif start <= elapsed:
                running[row] = (elapsed - start) / (end - start)
        return frozenset(done), running


class Profile:
    """What one processor's kernels of a frame draw over the frame: dynamic energy
    (J) and DRAM bytes from the frame's start to any time in it, piecewise linear
    between the kernels' starts and ends (a held frame draws exactly what its
    kernels did, not their mean: a cut part-way is then exact too).

    Args:
        kernels: ``(start s, end s, units held, power W, DRAM B/s, placement)`` of
            each kernel.
        period: the frame's length (s).
    """

    def __init__(self, kernels: list[tuple[float, float, float, float, float]],
                 period: float):
        changes: dict[float, list[float]] = {}  # time -> [change of W, of B/s]
        for start, end, _need, power, dram_rate, _placement in kernels:
            for at, sign in ((start, 1.0), (end, -1.0)):
                change = changes.setdefault(at, [0.0, 0.0])
                change[0] += sign * power
                change[1] += sign * dram_rate
        self.times, self.energy, self.dram = [0.0], [0.0], [0.0]
        self.power, self.dram_rate = [], []
        power = dram_rate = 0.0
        for at in sorted(changes):
            if at > self.times[-1]:
                dt = at - self.times[-1]
                self.power.append(power)
                self.dram_rate.append(dram_rate)
                self.times.append(at)
                self.energy.append(self.energy[-1] + power * dt)
                self.dram.append(self.dram[-1] + dram_rate * dt)
            power += changes[at][0]
            dram_rate += changes[at][1]
        self.power.append(0.0)  # after the kernels (a hold ends at the frame's period)
        self.dram_rate.append(0.0)

    def at(self, t: float) -> tuple[float, float]:
        """Dynamic energy (J) and DRAM bytes from the frame's start to ``t`` s."""
        k = bisect.bisect_right(self.times, t) - 1
        if k < 0:
            return 0.0, 0.0
        dt = t - self.times[k]
        return (self.energy[k] + self.power[k] * dt, self.dram[k] + self.dram_rate[k] * dt)


@dataclass
class _Hold:
    """A frame being held: its start (s), its end event and its stand-in tasks."""

    start: float
    finished: simpy.Event
    template: _Template  # (its signature names the plan the frame started with)
    stand_ins: list[tuple[Processor, Task]] = field(default_factory=list)
    cut: bool = False


class TenantForward:
    """Watches a job's kernel-level frames and holds the steady ones (see the
    module docstring).

    Args:
        runner: the job's :class:`~simulator.engine.job_runner.JobRunner`.

    Attributes:
        held: frames completed while held.
        cuts: held frames cut part-way (their rest ran at kernel level).
    """

    def __init__(self, runner):
        self.runner = runner
        self.env = runner.env
        self.control = runner.control
        self.held = self.cuts = 0
        # confirmed steady frames by signature: an OPP a throttled cluster returns
        # to, or shares a scheduler gives back, find theirs at once
        self._templates: dict[tuple, _Template] = {}
        self._ready: _Template | None = None  # the template of the frame starting now
        self._candidate: _Template | None = None  # the last watched frame's
        self._watching: tuple | None = None  # (start s, signature, log) of a watched frame
        self._disturbed = False  # the run changed during the watched frame
        self._hold: _Hold | None = None
        self._domains: set[int] = set()  # ids of the domains listened to
        self.control.watchers.append(self._changed)

    # -- signature -----------------------------------------------------------
    def _signature(self, state) -> tuple | None:
        """The plan, the run-time shares and the OPP index of each processor the
        plan uses; None if the plan cannot be held (skipped rows, an ``adapt``
        callback, data moved over links)."""
        plan = state.plan
        if plan.skip is not None or plan.adapt is not None or state.moves_data:
            return None
        processors = _processors(state)
        for proc in processors:
            if id(proc.domain) not in self._domains:  # listen from the first frame on
                self._domains.add(id(proc.domain))
                proc.domain.listeners.append(self._on_frequency)
        return self._conditions(state)

    def _conditions(self, state) -> tuple:
        """What a frame of ``state``'s plan runs under now: the plan object itself
        (not its id: a dropped plan's id is reused), the shares set at run time and
        the OPP index of each processor it uses."""
        return (state, tuple(sorted(self.control.shares.items(), key=str)),
                tuple(proc.domain.index for proc in _processors(state)))

    # -- watching kernel-level frames -----------------------------------------
    def watch(self) -> list | None:
        """A kernel-level frame starts now: the log its kernels go into as
        ``(row, task, end s)`` (:meth:`JobRunner._iteration`), or None if its
        plan cannot be held."""
        signature = self._signature(self.runner.state)
        if signature is None:
            self._watching = None
            return None
        self._disturbed = False
        log: list = []
        self._watching = (self.env.now, signature, log)
        return log

    def watched(self, epoch: int) -> None:
        """The watched frame ended now (``epoch``: the one it started in): keep it
        as a candidate, and as the template if it repeats the previous one."""
        watching, self._watching = self._watching, None
        if watching is None:
            return
        start, signature, log = watching
        frame = None
        if (not self._disturbed and epoch == self.control.epoch
                and self._signature(self.runner.state) == signature):
            frame = _frame(start, self.env.now, signature, log, self.runner.state)
        if frame is None:
            self._candidate = None
            return
        if self._candidate is not None and self._candidate.alike(frame):
            if len(self._templates) >= _TEMPLATES:  # bounded (they keep plans alive)
                self._templates.clear()
            self._templates[signature] = frame
        self._candidate = frame

    # -- holding ----------------------------------------------------------------
    def ready(self) -> bool:
        """Whether the frame starting now can be held."""
        signature = self._signature(self.runner.state)
        template = self._templates.get(signature) if signature is not None else None
        # its kernels would start at once only if nothing waits on their processors
        # and their units are free
        if template is None or not all(
                not proc._queue and units * share <= proc.free + 1e-9
                for proc, ((units, share), _profile) in template.profiles().items()):
            return False
        self._ready = template
        return True

    def hold(self):
        """SimPy generator: hold one frame; returns None if it ran to its end (or
        was aborted), else the point to resume it from at kernel level."""
        template = self._ready
        env = self.env
        finished = env.event()
        self.control.open[finished] = None  # an abort ends it (uncounted)
        hold = self._hold = _Hold(env.now, finished, template)
        for proc, ((units, share), profile) in template.profiles().items():
            stand_in = Task(f"{self.runner.job.name}/held frame", None, units, share, 0.0,
                            None)
            proc.occupy(stand_in, profile)
            proc.queue_watchers.append(self._queued)
            hold.stand_ins.append((proc, stand_in))
        finished.callbacks.append(self._vacate)
        timer = env.timeout(template.period)
        timer.callbacks.append(lambda _event: _end(finished))
        epoch = self.control.epoch
        resume = yield finished
        if resume is None and epoch == self.control.epoch:
            self.held += 1
        return resume

    def _vacate(self, event: simpy.Event) -> None:
        """The held frame ended (its time, a cut or an abort): the stand-ins leave.
        After a cut (``event.value``: where to resume) the processors start the
        frame's running kernels before what queued (JobRunner._tenant_frame)."""
        hold, self._hold = self._hold, None
        self.control.open.pop(hold.finished, None)  # (not via track(): one a frame)
        for proc, stand_in in hold.stand_ins:
            proc.queue_watchers.remove(self._queued)
            proc.vacate(stand_in, dispatch=event.value is None)

    def _cut_soon(self) -> None:
        """Something may have changed the held frame's timing: decide once the
        change is complete (an abort also bumps the epoch and ends the frame
        after telling the watchers), at the same instant."""
        hold = self._hold
        if hold is not None and not hold.cut:
            hold.cut = True
            event = self.env.event()
            event.callbacks.append(lambda _event: self._cut(hold))
            event.succeed()

    def _cut(self, hold: _Hold) -> None:
        if hold.finished.triggered:  # aborted, or ended at its time meanwhile
            return
        template = hold.template
        # what the held frame's kernels would run under now (its own plan: a new
        # one is for the next frames)
        if self._conditions(template.signature[0]) == template.signature:
            # a new plan, a suspend, a stop: hold on
            hold.cut = False
            return
        self._candidate = None  # (a frame cut part-way is no template)
        self.cuts += 1
        hold.finished.succeed(template.resume_point(self.env.now - hold.start))

    # -- what changes the run ---------------------------------------------------
    def _changed(self) -> None:
        """RunControl watcher: a policy suspended, stopped, aborted, re-shared or
        re-planned the job."""
        self._disturbed = True
        self._cut_soon()

    def _queued(self) -> None:
        """A task had to queue on a processor a stand-in holds, or a share change
        over-committed it: at kernel level it would wait for the frame's kernels
        (or they for it), so the frame goes on at kernel level from now."""
        self._disturbed = True
        hold = self._hold
        if hold is not None and not hold.finished.triggered:
            self._candidate = None
            self.cuts += 1
            hold.finished.succeed(hold.template.resume_point(self.env.now - hold.start))

    def _on_frequency(self, before: bool) -> None:
        """Domain listener: an OPP is about to change (``before``)."""
        if before:
            self._disturbed = True
            self._cut_soon()


def _end(finished: simpy.Event) -> None:
    """The held frame's time is up (unless a cut or an abort ended it first)."""
    if not finished.triggered:
        finished.succeed()


def _processors(state) -> list[Processor]:
    """The distinct processors a plan uses, in row order."""
    return list(dict.fromkeys(state.procs))


def _frame(start: float, end: float, signature: tuple, log: list, state) -> _Template | None:
    """The template of a watched kernel-level frame, or None if one of its
    kernels waited for units or was re-timed."""
    ends = {row: finish for row, _task, finish in log}
    offsets = []
    kernels: dict[Processor, list] = {}
    for row, task, finish in log:
        if task.gen != 1:  # re-timed while it ran (an OPP or a share changed)
            return None
        ready = max((ends[pred] for pred in state.preds[row]), default=start)
        if abs(task.start - ready) > _STARTED_AT_ONCE_S:  # waited for units
            return None
        offsets.append((row, task.start - start, finish - start))
        kernels.setdefault(state.procs[row], []).append(
            (task.start - start, finish - start, task.need, task.power, task.dram_rate,
             (task.units, task.share)))
    period = end - start
    if period <= 0.0 or not offsets:
        return None
    if not all(_constant_need(rows, period) for rows in kernels.values()):
        return None
    offsets.sort()
    return _Template(signature, period, offsets, kernels)


def _constant_need(kernels: list, period: float) -> bool:
    """Whether a processor's kernels of a frame hold the same units from the
    frame's start to its end: only then is a stand-in holding their mean units
    what the other tenants, leakage and the governors' utilisation (the busiest
    core's, ``min(busy, 1)``: not linear) see at kernel level. A chain with one
    placement is; a frame over two processors (each idles while the other works)
    or with uneven parallel branches is not."""
    changes: dict[float, float] = {}
    for start, end, need, *_rest in kernels:
        changes[start] = changes.get(start, 0.0) + need
        changes[end] = changes.get(end, 0.0) - need
    need, level = 0.0, None
    for at in sorted(changes):
        if at >= period - _TOLERANCE_S:
            break
        need += changes[at]
        if abs(need) < 1e-12 and at > _TOLERANCE_S:
            return False  # a gap
        if level is None:
            if at > _TOLERANCE_S:
                return False  # idle at the start
            level = need
        elif abs(need - level) > 1e-9:
            return False
    return level is not None
