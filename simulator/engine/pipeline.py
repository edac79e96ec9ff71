"""Fast-forward of a steady pipeline: whole periods held instead of simulated.

A pipelined job (``max_in_flight > 1``: frames in flight across a client, a
network link and a server, as DynO runs them) or a job spread over several
devices repeats one pattern frame after frame once its pipeline has filled:
every frame takes the same path through the same queues, and the state of the
whole system at one frame's end is the state at the end of the frame ``m``
before, moved by one *period* ``P`` (``m`` frames). With ``fast_forward`` the
job's runner asks :meth:`PipelineForward.step` at every frame end whether the
pipeline is in such a steady state and, if it is, *holds* whole periods
instead of simulating their kernels (nothing here is specific to a policy).

**Steady.** At a frame end the pipeline's state is summed up as its
*signature*: the job's pending events, each named (a kernel's completion by
its frame counted back from the newest and its row, data in transit by its
channel) with its time from now; every channel's and port's busy horizon; every
processor's running and queued kernel counts; and the frames in flight (each
one's plan, each of their queued or running kernels by frame counted back from
the newest, row, and whether it runs). The pipeline is steady with period
``m`` frames when, at each of the last ``3m`` frame ends, the signature equals
the one ``m`` frame ends before (times within ``_TOL``; the frame's start one
period after its predecessor's too), no OPP changed on any device, the plan
for new frames is the same and so are the kernels it skips (``plan.skip``) for
every frame in flight or held, one period apart. Equal signatures mean equal
states: a kernel's speed depends only on its OPP and share. (Equal frame intervals alone are not
enough: a link-paced pipeline ends frames a period apart while its client's
queue still fills, and the work of those periods is not the steady one's.)

**Held.** The job's pending events are taken off SimPy's queue and its running
kernels off their processors (their power with them); every processor of every
device instead *holds* its mean rates over the last ``3m`` frames (dynamic power, busy
units, busiest-core busy fraction, DRAM traffic: :meth:`Processor.hold`), and
the clock runs on. Everything else keeps going at its own times: the samplers
integrate the held power into each device's thermal network (with leakage at
the temperatures reached), the trip governors poll, a policy's timers fire,
the time limit ends the run. The DVFS governors hold their OPPs, as in a
one-device replay (:mod:`simulator.engine.fast_forward`). Each skipped frame
still ends at its own time, ``k`` periods after its template in the last
period, with its own start and end in the iteration log, the iteration
listeners called and, for a plan that adapts, its report (the template's,
moved by ``k`` periods) given to the plan at that time. The links are
credited each frame's share of those frames' bytes and busy time.

**Ends.** A hold ends after ``n`` periods: as many as the job has frames
left and as fit before the next change of any link's bandwidth, latency or
network type (the data in transit when the hold ends was timed with the
bandwidth before it). It ends early, at the end of the period in progress,
when something changes: an OPP or a cap on any device, a policy changing the
run (suspend, stop, abort, share, replan: :attr:`RunControl.watchers`) or an adapting
plan returning a new plan. Then the pipeline is put back exactly as it was,
moved by the whole periods held: the pending events and the kernels' times, the
channels' and ports' busy horizons, the frames in flight (their starts and
reports; their iteration numbers and their kernels' priorities as kernel level
computes them for the frames they now are); a kernel whose OPP or share changed
meanwhile is re-timed from the work it had done, one withdrawn (an abort) frees
its units. The job then runs at kernel level until it is steady again. A
change during a hold thus takes effect up to one period late.

**Exact and approximate.** The frames' ends and starts, the frame count, the
energy of whole held periods and the links' totals are those of kernel level
(the same periods repeated), to float rounding. The heat is approximated: the
thermal network is driven by each period's mean power rather than its
kernel-by-kernel profile (periods of tens of ms against thermal time constants
of seconds), so temperatures differ slightly, as does the leakage they drive.
When the run keeps per-kernel records (a kernel table, a timeline, a policy's
metrics that read them), held frames get the records of the period before the
hold, moved by whole periods and frames (:class:`_Echo`): what a policy derives
from records (DynO's stage times, bytes and energy split per frame) is then
that of kernel level's steady periods. Without records the memory stays flat.
(The ``kernels`` metric counts the kernels executed, held ones not.)

Never steady, so never held: a utilisation-driven DVFS governor whose OPPs move
with the frames' phase against its period (schedutil). Not held: a link
through a radio (its promotions and tails are not periodic in frames), a run
with an audit, a state with data in transit on a channel other than the
system's links and the devices' channels (a storage read).
"""

from __future__ import annotations

import heapq
from collections import deque
from typing import NamedTuple

import simpy

from ..policy import IterationReport
from .processor import _Completion

# s: signatures, periods: two times equal within this (plus a relative 1e-9 of the
# period). Times are sums of the same kernel durations in another order, so equal
# states give times equal to float rounding (~1e-15 s at a run's ~10-1000 s);
# a real difference is a kernel's duration or a transfer's (>= ~1 us).
_TOL = 1e-9
_PERIODS = 3  # equal periods in a row before a hold
_MIN_HOLD = 2  # periods: a shorter hold saves less than its bookkeeping


def holds_system(max_in_flight: int, devices: int) -> bool:
    """Whether a fast-forwarded job with up to ``max_in_flight`` frames in flight,
    in a system of ``devices`` devices, holds whole periods of the system here
    (else :mod:`simulator.engine.fast_forward` replays its iterations on its device)."""
    return max_in_flight > 1 or devices > 1


class _Mark(NamedTuple):
    """The pipeline at one kernel-level frame end (see :meth:`PipelineForward.step`)."""

    time: float  # s
    version: int  # OPP changes so far
    plan: object  # the runner's compiled plan for the next frames
    signature: list[float]  # :meth:`PipelineForward._state`
    work: list[tuple]  # each processor's cumulative integrals (Processor.peek)
    links: list[float]  # channels' busy s and bytes, ports' bytes (cumulative)
    start: float  # s, the start of the frame that ended
    ended: int  # frames ended at kernel level so far
    structure: tuple  # :meth:`PipelineForward._state`
    records: tuple[int, int]  # kernel and transfer records kept so far


class PipelineForward:
    """Steady-state fast-forward of one pipelined job (see the module docstring).

    Args:
        system: the run's devices and links (the job is alone in it).
        runner: the job's :class:`~simulator.engine.job_runner.JobRunner`.
        recorder: the run's records (``tasks``, ``transfers`` lists of tuples and
            ``keep``), or None: held frames get the last period's records, moved.
    """

    def __init__(self, system, runner, recorder=None):
        self.runner = runner
        self.recorder = recorder if recorder is not None and recorder.keep else None
        self.env = runner.env
        self.job = runner.job.name
        self.devices = list(system.devices.values())
        self.processors = [proc for device in self.devices
                           for proc in device.processors.values()]
        channels = list(system.links.values())
        for device in self.devices:
            channels.extend(device.channels.values())
        self.channels = list(dict.fromkeys(channels))
        self._position = {channel: i for i, channel in enumerate(self.channels)}
        self.ports = list(dict.fromkeys(port for channel in self.channels
                                        for port in channel.ports))
        self.radio = any(channel.radio is not None for channel in self.channels)
        self.version = 0  # OPP changes on any device, counted
        for device in self.devices:
            for domain in device.domains.values():
                domain.listeners.append(self._on_change)
        self.history: deque = deque(maxlen=_PERIODS * runner.job.max_in_flight + 1)
        self.frames: deque = deque(maxlen=runner.job.max_in_flight)  # templates
        self.holds = 0  # holds done
        self.held_frames = 0  # frames ended during holds
        self.held_s = 0.0  # simulated s held
        self.spans: list[tuple[float, float]] = []  # (start, end) s of each hold
        self._disturbed = False
        self._holding: int | None = None  # during a hold: the control epoch it began in
        self.ended = 0  # frames ended at kernel level
        self._runs: dict[int, int] = {}  # frames per period -> frame ends matched in a row

    # -- watching ---------------------------------------------------------
    def _on_change(self, before: bool) -> None:
        if not before:
            self.version += 1
            self._disturbed = True

    def _on_control(self) -> None:
        self._disturbed = True
        # (called before an abort takes effect: look once it has)
        self.env.timeout(0).callbacks.append(self._after_control)

    def _after_control(self, _event) -> None:
        """An abort during a hold withdrew the frames in flight: the processors stop
        drawing the held rates now, as they go idle at kernel level (the hold runs
        on, idle, to its period's end)."""
        if self._holding is not None and self.runner.control.epoch != self._holding:
            for proc in self.processors:
                proc.release()

    def completed(self, finished: simpy.Event) -> None:
        """A frame ended at kernel level now: a template for later holds."""
        self.ended += 1
        self.frames.append((finished.frame_start, self.env.now, finished.report,
                            finished.state))

    def _pending(self, pending: list) -> tuple[list, bool]:
        """The job's entries on SimPy's queue (live kernel completions, data in
        transit on the system's links and device channels) and whether the state is a
        clean cut (nothing of the job due now, nothing in transit elsewhere)."""
        now, job, mine = self.env._now, self.job, []
        frames = set(pending)
        for entry in self.env._queue:
            event = entry[3]
            if type(event) is _Completion:
                task = event.task
                if task.meta is None or task.meta[0] != job or event.gen != task.gen:
                    continue
            elif getattr(event, "channel", None) is None:
                if event in frames:  # a frame ending now, not yet processed
                    return mine, False
                continue
            elif event.channel not in self._position:
                # data in transit on a channel this fast-forward does not move (a
                # storage read): not a state it can hold
                return mine, False
            if entry[0] <= now:
                return mine, False
            mine.append(entry)
        return mine, True

    def _state(self, pending: list, entries: list) -> tuple[tuple, list[float]]:
        """The pipeline's state now, as ``(structure, signature)``.

        The structure is what the frames in flight are, apart from times: each one's
        plan; for every kernel of theirs queued or running, its frame (counted back
        from the newest), row and whether it runs; what each pending entry is (a
        kernel's completion by frame counted back and row, data in transit by its
        channel); and each processor's running and queued counts. The signature is
        the times: each pending entry's from now, in the structure's order (so that
        equal signatures pair the same kernels and transfers), then every channel's
        and port's busy horizon."""
        frames = [event for event in pending if not event.triggered]
        newest = max((event.index[0] for event in frames), default=0)
        plans = tuple(id(event.state) for event in
                      sorted(frames, key=lambda event: event.index[0]))
        tasks = sorted((newest - task.meta[1], task.meta[2], task.start >= 0.0)
                       for task in self.runner.control.inflight)
        now, position, keyed = self.env._now, self._position, []
        for entry in entries:
            event = entry[3]
            if type(event) is _Completion:
                key = (0, newest - event.task.meta[1], event.task.meta[2])
            else:
                key = (1, position[event.channel], 0)
            keyed.append((key, entry[0] - now))
        keyed.sort()
        counts = tuple((len(proc.running), proc.queued) for proc in self.processors)
        structure = (plans, tuple(tasks), tuple(key for key, _ in keyed), counts)
        signature = [offset for _, offset in keyed]
        signature.extend(max(0.0, c.free_at - now) for c in self.channels)
        signature.extend(max(0.0, p.free_at - now) for p in self.ports)
        return structure, signature

    def _kept(self) -> tuple[int, int]:
        recorder = self.recorder
        return (0, 0) if recorder is None else (len(recorder.tasks), len(recorder.transfers))

    def _links(self) -> list[float]:
        return ([c.busy_time for c in self.channels] + [c.bytes_sent for c in self.channels]
                + [p.bytes_sent for p in self.ports])

    def _period(self) -> int | None:
        """Frames per period ``m`` if, for each of the last :meth:`_window` frame
        ends, the state was the one ``m`` frame ends before moved by one period (the
        signatures, the frame's start and end; one plan, no OPP change), else None.
        One comparison per ``m`` per frame end: ``_runs[m]`` counts the frame ends
        in a row that matched."""
        history, runs = self.history, self._runs
        last = history[-1]
        found = None
        for m in range(1, min(len(history), self.runner.job.max_in_flight + 1)):
            mark = history[-1 - m]
            period = last.time - mark.time
            tol = _TOL + 1e-9 * period
            sig, other = last.signature, mark.signature
            same = (period > 0 and last.ended - mark.ended == m  # one frame end per mark
                    and mark.version == last.version and mark.plan is last.plan
                    and mark.structure == last.structure
                    and abs(last.start - mark.start - period) <= tol
                    and len(sig) == len(other)
                    and all(abs(a - b) <= tol for a, b in zip(sig, other)))
            runs[m] = runs.get(m, 0) + 1 if same else 0
            if found is None and same and runs[m] >= self._window(m):
                found = m
        return found

    def _window(self, m: int) -> int:
        """Frame ends over which steady state is tested and the held rates
        measured: ``_PERIODS`` periods."""
        return _PERIODS * m

    # -- holding ----------------------------------------------------------
    def step(self, pending: list, iteration: int):
        """SimPy generator (``yield from``), called by the runner when a slot is free,
        before it starts frame ``iteration``: hold whole periods if the pipeline is
        steady. Returns the frames skipped (0: none)."""
        runner, env = self.runner, self.env
        if (not self.frames or self.frames[-1][1] != env.now or self.radio
                or runner.audit is not None or runner.control.held):
            return 0
        entries, clean = self._pending(pending)
        if not clean:
            self.history.clear()
            self._runs.clear()
            return 0
        structure, signature = self._state(pending, entries)
        self.history.append(_Mark(env.now, self.version, runner.state, signature,
                                  [proc.peek() for proc in self.processors], self._links(),
                                  self.frames[-1][0], self.ended, structure, self._kept()))
        m = self._period()
        if m is None:
            return 0
        period = env.now - self.history[-1 - m].time
        # the data in transit at the hold's end was timed with the bandwidth before it
        horizon = max([entry[0] for entry in entries]
                      + [c.free_at for c in self.channels] + [p.free_at for p in self.ports]
                      + [env.now]) - env.now
        change = min((self._next_change(c, env.now) for c in self.channels),
                     default=float("inf"))
        periods = (runner.job.iterations - iteration) // m
        if change != float("inf"):
            periods = min(periods, int((change - env.now - horizon) / period))
        skip = runner.state.plan.skip
        if skip is not None:
            periods = _periodic(skip, iteration, m, periods, runner.job.max_in_flight)
        if periods < _MIN_HOLD:
            return 0
        skipped = yield from self._hold(entries, pending, m, period, periods)
        return skipped

    @staticmethod
    def _next_change(channel, t: float) -> float:
        times = [channel.bandwidth.next_change(t)]
        latency = channel.latency
        if hasattr(latency, "next_change"):
            times.append(latency.next_change(t))
        network = channel.network
        if hasattr(network, "next_change"):
            times.append(network.next_change(t))
        return min(times)

    def _hold(self, entries: list, pending: list, m: int, period: float, periods: int):
        runner, env = self.runner, self.env
        frozen_frames = sum(not event.triggered for event in pending)  # in flight now
        # held rates: the mean over the window (its periods alike: states equal)
        window = self._window(m)
        t0, last, before = env.now, self.history[-1], self.history[-1 - window]
        span = t0 - before.time
        state = runner.state
        frozen = self._freeze(entries, [[(a - b) / span for a, b in zip(after, earlier)]
                                        for after, earlier in zip(last.work, before.work)])
        link_gain = [(a - b) / window
                     for a, b in zip(last.links, before.links)]  # per frame
        for device in self.devices:
            device.replaying = True
        self._disturbed = False
        runner.control.watchers.append(self._on_control)
        self.holds += 1
        self.spans.append((t0, t0))
        held_before = self.held_s
        epoch = self._holding = runner.control.epoch  # an abort drops the frames after it
        templates = list(self.frames)[-m:]
        done = env.event()
        count = [0]  # frames ended
        live = [0]  # of them, before any abort
        echo = (_Echo(self.recorder, [mark.records for mark in list(self.history)[-1 - m:]],
                      period, m) if self.recorder is not None else None)

        def arm() -> None:
            k, j = divmod(count[0], m)
            end = templates[j][1] + (k + 1) * period
            env.timeout(max(0.0, end - env.now)).callbacks.append(deliver)

        def deliver(_event) -> None:
            k, j = divmod(count[0], m)
            start, end, report, frame_state = templates[j]
            shift = (k + 1) * period
            count[0] += 1
            self.held_s = held_before + (env.now - t0)  # (a run may end in a hold)
            self.spans[-1] = (t0, env.now)
            if runner.control.epoch == epoch:  # (else aborted: uncounted, as at kernel level)
                self._credit(link_gain)
                live[0] += 1
                self.held_frames += 1
                if echo is not None:
                    echo.frame(k + 1, j)
                if report is not None:
                    runner._adapt(frame_state, _moved(report, shift, (k + 1) * m))
            if runner.state is not state:  # a new plan (adapted, or a policy's replan)
                self._disturbed = True
            runner._record_iteration(start + shift, epoch)
            if j == m - 1 and (self._disturbed or k + 1 == periods):
                done.succeed(k + 1)
            else:
                arm()

        arm()
        held = yield done
        self._holding = None
        runner.control.watchers.remove(self._on_control)
        shift = env.now - t0
        for device in self.devices:
            device.replaying = False
        self._thaw(frozen, t0, shift)
        inflight = runner.control.inflight
        for channel in self.channels:
            channel.free_at += shift
            channel.last_transfer = tuple(t + shift for t in channel.last_transfer)
        for port in self.ports:
            port.free_at += shift
        self._renumber([event for event in pending if not event.triggered], held * m,
                       shift)
        for entry in entries:
            event = entry[3]
            if type(event) is _Completion and event.task not in inflight:
                continue  # (withdrawn)
            heapq.heappush(env._queue, (entry[0] + shift, *entry[1:]))
        self.history.clear()
        self._runs.clear()
        if runner.control.epoch != epoch:
            # Aborted. Kernel level had started a frame at the hold's start for each
            # free slot and one more at each frame end, and the abort dropped them
            # with the frames in flight (counted by the abort itself): those are
            # dropped here too, and the next frame takes the number after them.
            extra = runner.job.max_in_flight - frozen_frames
            runner.control.aborted += extra
            return live[0] + extra
        return held * m

    def _freeze(self, entries: list, rates: list[list[float]]) -> list[tuple]:
        """Take the job's events (``entries``) off SimPy's queue (its private heap: see
        fast_forward._horizon) and its running kernels off their processors, which
        hold ``rates`` instead (one list per processor, :meth:`Processor.hold`'s
        arguments); returns what :meth:`_thaw` puts back."""
        env = self.env
        ids = {id(entry[3]) for entry in entries}
        queue = [entry for entry in env._queue if id(entry[3]) not in ids
                 and not (type(entry[3]) is _Completion and entry[3].task.meta is not None
                          and entry[3].task.meta[0] == self.job)]  # (stale ones too)
        heapq.heapify(queue)
        env._queue[:] = queue
        frozen = []
        for proc, held in zip(self.processors, rates):
            proc.settle()
            frozen.append((proc.running, proc.power, proc.busy, proc.dram_rate,
                           proc.domain.index, [task.need for task in proc.running]))
            proc.running = []
            proc.frozen = True  # (a reshare or an abort meanwhile starts nothing)
            proc.power = proc.busy = proc.dram_rate = 0.0
            if any(held):
                proc.hold(*held)
        return frozen

    def _thaw(self, frozen: list[tuple], t0: float, shift: float) -> None:
        """Put the kernels frozen at ``t0`` back on their processors, ``shift`` s
        later: one withdrawn meanwhile (an abort) frees its units, one whose OPP or
        share changed is re-timed from the work it had done at ``t0``."""
        now, inflight = self.env.now, self.runner.control.inflight
        for proc, (running, power, busy, dram_rate, index, needs) in zip(self.processors,
                                                                          frozen):
            proc.release()
            proc.frozen = False
            proc.running = running
            proc.power, proc.busy, proc.dram_rate = power, busy, dram_rate
            for task, need in zip(list(running), needs):  # (_release edits running)
                if task not in inflight:  # withdrawn meanwhile: free its units
                    task.need = need
                    task.gen += 1
                    proc._release(task)
                    continue
                task.start += shift
                if task.need != need:  # a share changed meanwhile (RunControl.reshare)
                    proc.free -= task.need - need
                    proc.busy += task.need - need
                elif proc.domain.index == index:
                    task.t_last += shift
                    continue
                task.done = min(1.0, task.done + (t0 - task.t_last) * task.rate)
                task.t_last = now
                proc._time(task)
            proc._dispatch()

    def _renumber(self, frames: list, skipped: int, shift: float) -> None:
        """The frames in flight become those ``skipped`` frames later: their starts and
        reports ``shift`` s later, their iteration numbers and priorities (a pipelined
        frame's kernels rank by iteration, :meth:`JobRunner._iteration`) as the later
        frames' would be, computed as kernel level computes them."""
        tasks: dict[int, list] = {}
        for task in self.runner.control.inflight:
            tasks.setdefault(task.meta[1], []).append(task)
        touched = set()
        for event in frames:
            event.frame_start += shift
            if event.report is not None:
                _shift(event.report, shift, skipped)
            index, state = event.index, event.state
            old = index[0]
            index[0] = old + skipped
            if self.runner.job.max_in_flight > 1:  # (else no offset: JobRunner._iteration)
                index[1] = index[0] * state.priority_span
            for task in tasks.get(old, ()):
                row = task.meta[2]
                task.meta = (task.meta[0], index[0], row)
                task.priority = state.priorities[row] + index[1]
                touched.add(self.runner.control.inflight[task])
        for proc in touched:  # queued tasks: their heaps in the new priorities
            proc.reprioritise()

    def _credit(self, gain: list[float]) -> None:
        n = len(self.channels)
        for i, channel in enumerate(self.channels):
            channel.busy_time += gain[i]
            channel.bytes_sent += gain[n + i]
        for i, port in enumerate(self.ports):
            port.bytes_sent += gain[2 * n + i]


class _Echo:
    """The records of held frames: the last period's, repeated one period later each
    time (the steady state repeats it; the frames in flight are renumbered the same
    way, :meth:`PipelineForward._renumber`).

    The template of the ``j``-th frame end of a held period is what was recorded
    between the template period's frame ends ``j - 1`` and ``j`` (``counts``: the
    record counts at its ``m + 1`` frame ends): the kernels that ended and the
    transfers sent meanwhile. :meth:`frame` appends it for period ``k`` (from 1),
    moved by ``k`` periods and ``k * m`` frames, at that frame's end.
    """

    def __init__(self, recorder, counts: list[tuple[int, int]], period: float, m: int):
        self.recorder, self.period, self.m = recorder, period, m
        # kernels: (job, iteration, row, label, processor, units, share, lanes, start, end);
        # transfers: (channel, label, bytes, start, end)
        self.tasks = [recorder.tasks[a[0]:b[0]] for a, b in zip(counts, counts[1:])]
        self.transfers = [recorder.transfers[a[1]:b[1]] for a, b in zip(counts, counts[1:])]

    def frame(self, k: int, j: int) -> None:
        """Append the records of frame end ``j`` of held period ``k``."""
        shift, frames = k * self.period, k * self.m
        # (fields named rather than sliced: a held frame end copies ~500 records)
        self.recorder.tasks += [
            (job, iteration + frames, row, label, proc, units, share, lanes, start + shift,
             end + shift)
            for job, iteration, row, label, proc, units, share, lanes, start, end
            in self.tasks[j]]
        self.recorder.transfers += [
            (channel, label, nbytes, start + shift, end + shift)
            for channel, label, nbytes, start, end in self.transfers[j]]


def _periodic(skip, first: int, m: int, periods: int, in_flight: int) -> int:
    """The whole periods, up to ``periods``, that may be held from frame ``first``
    on: those over which the rows a plan skips repeat every ``m`` frames (``skip(i)
    == skip(i - m)``), from the oldest frame that may be in flight on (``in_flight -
    1`` before ``first``: the first to end in a hold, whose template is the frame
    ``m`` before it; the frames in flight are renumbered by the held frames)."""
    for i in range(max(m, first - in_flight + 1), first + periods * m):
        if skip(i) != skip(i - m):
            return max(0, (i - first) // m)
    return periods


def _moved(report: IterationReport, dt: float, frames: int) -> IterationReport:
    """A copy of ``report`` for the frame ``frames`` later, ``dt`` s later."""
    return IterationReport(report.job, report.iteration + frames, report.plan,
                           report.start + dt, report.end + dt,
                           [(row, proc, s + dt, e + dt) for row, proc, s, e in report.kernels],
                           [(c, b, r + dt, s + dt, e + dt, a + dt)
                            for c, b, r, s, e, a in report.transfers])


def _shift(report: IterationReport, dt: float, frames: int) -> None:
    """Move an in-flight frame's report (what it did so far) ``dt`` s later."""
    report.iteration += frames
    report.start += dt
    report.kernels[:] = [(row, proc, s + dt, e + dt) for row, proc, s, e in report.kernels]
    report.transfers[:] = [(c, b, r + dt, s + dt, e + dt, a + dt)
                           for c, b, r, s, e, a in report.transfers]
