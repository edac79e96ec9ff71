"""Runs one job: iterations of a kernel DAG under a plan.

For every iteration, kernels are released when all their predecessors have
finished and any data they produced in another address space has arrived.
A producer's output crosses to another address space once per destination
space (not once per consumer), as a framework would copy a tensor once.

A job's input and output live in its device's CPU memory (in the first
processor's on a device without a CPU, e.g. a DSP board): a first kernel
placed on an accelerator with its own address space waits for its input to be
uploaded, and an iteration ends only when the outputs of last kernels placed
there are downloaded (what a GPU delegate or a FastRPC call does per inference).

Iterations run back to back, or pipelined: with ``job.max_in_flight = k`` up
to ``k`` iterations are in flight at once (a new one starts when one of them
finishes), and a processor serves earlier iterations first. A plan with an
``adapt`` callback gets an :class:`~simulator.policy.IterationReport` after
each of its iterations and may return the plan for the iterations started
next; iterations already in flight keep the plan they started with.

A plan's ``skip(iteration)`` names conditional kernels that do not run in an
iteration: they complete at once and move no data. A job may pause every
``pause_every`` iterations (the device idles), and with ``fast_forward``
iterations whose device state was seen before are replayed from a memo
instead of simulated kernel by kernel (:mod:`simulator.engine.fast_forward`).

A policy may suspend, resume, stop or abort a job and change its share while
it runs (``runner.control``, :meth:`JobRunner.set_share`; see
:mod:`simulator.engine.control`): apps starting and being killed.

With an :class:`~simulator.engine.audit.Audit` every kernel-level iteration
reports each step to it, and the audit checks the promises above against the
trace (tests; ``simulate(..., audit=True)``).
"""

from __future__ import annotations

import copy
import weakref
from operator import itemgetter

import simpy

from .._gc import gc_paused
from ..errors import ConfigError
from ..hardware.cost import Unsupported
from ..policy import IterationReport, Job, Plan
from .audit import Audit
from .control import RunControl
from .fast_forward import FastForward
from .iterations import IterationLog
from .pipeline import PipelineForward, holds_system
from .processor import Task
from .system import System
from .tenant import TenantForward

# Compiled plans a job runner keeps (JobRunner._compile). An entry goes with its plan
# (a weak reference); this bounds a policy that keeps every plan it ever made, far
# above the few models a policy switches between (NestDNN: an app's descendants)
_PLANS_KEPT = 64

_NONE: frozenset[int] = frozenset()


class JobRunner:
    """Executes ``job`` on ``system`` following ``plan``.

    Args:
        env: the SimPy environment.
        system: devices and links.
        job: the job.
        plan: placements and priorities, one per kernel row.
        audit: checks every kernel-level iteration (None: no checks, the default).
        keep_iterations: keep every iteration's start and end (else their count,
            summed duration and the last: :mod:`simulator.engine.iterations`).
        recorder: the run's per-kernel and per-transfer records, if kept (a
            pipeline's fast-forward writes the held frames' records into it).
        shares_device: other jobs run on the job's device (its fast-forward then
            holds steady frames: :mod:`simulator.engine.tenant`).

    Raises:
        ConfigError: a placement names an unknown processor, asks for more units
            than it has, or puts a kernel where it cannot run.
    """

    def __init__(self, env: simpy.Environment, system: System, job: Job, plan: Plan,
                 audit: Audit | None = None, keep_iterations: bool = True,
                 recorder=None, shares_device: bool = False):
        self.env = env
        self.audit = audit
        self.system = system
        self.job = job
        # plans compiled so far, by id: (a weak reference to the plan, its shape, the
        # compiled template)
        self._compiled: dict[int, tuple[weakref.ref, tuple, _PlanState]] = {}
        self.state = self._compile(plan)
        self.iteration_times = IterationLog(keep_iterations)  # (start, end) s, completed
        self.pause_time = 0.0  # s spent in pauses
        self.pause_energy = 0.0  # J the device drew during pauses
        # Fast-forward: iterations replayed one at a time on one device, whole
        # periods of a steady pipeline (several in flight, several devices) held,
        # or, on a device shared with other jobs, steady frames held
        pipelined = holds_system(job.max_in_flight, len(system.devices))
        alone = not pipelined and not shares_device
        self.fast_forward = (FastForward(system.devices[job.device], job.name)
                             if job.fast_forward and alone else None)
        self.pipeline = (PipelineForward(system, self, recorder)
                         if job.fast_forward and pipelined else None)
        self.done = env.event()
        self.control = RunControl(env)  # suspend/resume/stop/abort (policies, at run time)
        # (with an audit every frame runs at kernel level: it checks each kernel)
        self.tenant = (TenantForward(self) if job.fast_forward and shares_device
                       and not pipelined and audit is None else None)

    def set_share(self, share: float, processor: str | None = None) -> None:
        """Give the job's kernels (on ``processor``, or all) ``share`` of their units
        from now on, those in flight included, whatever their plan says
        (:mod:`simulator.engine.control`)."""
        self.control.reshare(share, processor)

    def replan(self, plan: Plan) -> None:
        """Run ``plan`` for the iterations started from now on (a policy switching
        models at run time); iterations in flight keep the plan they started with."""
        self.state = self._compile(plan)
        self.control.replanned()

    def _compile(self, plan: Plan) -> _PlanState:
        """``plan`` compiled for execution: once per plan object (a policy switching
        between a few models passes the same few plans again and again: NestDNN's
        apps ~60 times in a 60-s run, ~1.5 ms each), then a fresh state sharing the
        compiled tables each time it is chosen (a new object, with no fast-forward
        data: what holds frames keys on it, as on a newly compiled one). A plan is
        not to be changed once passed (a new decision is a new Plan); one whose
        lists were replaced meanwhile is compiled again."""
        # what the plan holds (compared by identity) and its length
        shape = (plan.placements, plan.priorities, plan.trace, plan.skip, plan.adapt)
        compiled, key = self._compiled, id(plan)
        entry = compiled.get(key)
        if (entry is None or entry[0]() is not plan
                or any(a is not b for a, b in zip(entry[1], shape, strict=True))
                or entry[2].size != len(plan.placements)):
            if len(compiled) >= _PLANS_KEPT:
                compiled.clear()
            # kept while the policy keeps the plan: its entry goes when the plan does
            # (DynO makes a new plan at each change of configuration), before its id
            # can be another plan's
            alive = weakref.ref(plan, lambda _gone, key=key: compiled.pop(key, None))
            template = _PlanState(self.system, self.job, plan, self._resolve)
            template.plan = None  # (the states made from it hold the plan, not the cache)
            entry = compiled[key] = (alive, shape, template)
        return entry[2].renewed(plan)

    def _record_iteration(self, start: float, epoch: int) -> None:
        if epoch == self.control.epoch:  # an aborted iteration does not count
            self.iteration_times.append((start, self.env.now))
            for listener in self.control.listeners:
                listener(self)

    @staticmethod
    def _resolve(system: System, job: Job, placement, row: int, labels: list[str]):
        """(device, local name, Processor) of a placement, checked."""
        try:
            device, local = system.resolve(placement.processor, job.device)
        except KeyError as err:
            raise ConfigError(f"kernel {labels[row]}: {err.args[0]}") from None
        proc = system.processor(device, local)
        if not 1 <= placement.units <= proc.spec.units:
            raise ConfigError(f"kernel {labels[row]}: {placement.units} units "
                              f"requested on {placement.processor}, which has "
                              f"{proc.spec.units}")
        if not 0 < placement.share <= 1:
            raise ConfigError(f"kernel {labels[row]}: share must be in (0, 1]")
        if not 0 < placement.memory_share <= 1:
            raise ConfigError(f"kernel {labels[row]}: memory_share must be in (0, 1]")
        return device, local, proc

    def process(self):
        """SimPy process: release time, then the iterations (back to back or pipelined)."""
        if self.job.start > 0:
            yield self.env.timeout(self.job.start)
        if self.job.max_in_flight <= 1 and self.pipeline is None:
            every, ff, tenant = self.job.pause_every, self.fast_forward, self.tenant
            iterations = self.job.iterations
            iteration = 0
            while iteration < iterations:
                if self.control.held:  # suspended or stopped at run time
                    yield from self.control.wait()
                    if self.control.stopped:
                        break
                epoch, start = self.control.epoch, self.env.now
                done = 1  # iterations this pass completes
                if tenant is not None:
                    yield from self._tenant_frame(iteration, epoch)
                elif ff is None:
                    yield self._iteration(iteration)
                else:
                    plan = self.state.plan
                    skip = plan.skip(iteration) if plan.skip is not None else _NONE
                    key = ff.key(skip)
                    if not ff.known(key):
                        ff.begin(skip)
                        yield self._iteration(iteration)
                        ff.end()
                    else:
                        if ff.steady and not self.control.listeners:
                            # A steady device: every known iteration up to the next
                            # pause in one block (listeners want each iteration as
                            # it ends, so they keep the one-by-one replay).
                            skips = self._block(iteration, skip)
                            ends, cut = yield from ff.replay_block(skips, self.state,
                                                                   self.control.watchers)
                        else:
                            # a limit cycle recognised meanwhile may complete several
                            ends, cut = yield from ff.replay(
                                key, self.state, lambda iteration=iteration, skip=skip:
                                self._leap_budget(iteration, skip))
                            skips = [skip] * (len(ends) + 1)
                        if cut is not None:  # the rest of the last one at kernel level
                            ends.append(None)
                        for end in ends[:-1]:
                            self.iteration_times.append((start, end))
                            start = end
                        done = len(ends)
                        if cut is not None:
                            yield from self._resume(iteration + done - 1, skips[done - 1],
                                                    cut)
                self._record_iteration(start, epoch)
                iteration += done
                if every and iteration % every == 0 and iteration < iterations:
                    yield from self._pause()
        else:
            pending: list[simpy.Event] = []
            pipeline = self.pipeline
            iteration = 0
            while iteration < self.job.iterations:
                if self.control.held:
                    yield from self.control.wait()
                    if self.control.stopped:
                        break
                if len(pending) >= self.job.max_in_flight:
                    while len(pending) >= self.job.max_in_flight:
                        yield self.env.any_of(pending)
                        pending = [event for event in pending if not event.processed]
                    if self.control.held:  # stopped or suspended while waiting for a slot
                        continue
                if pipeline is not None:
                    # steady: whole periods held (their frames end on their own)
                    skipped = yield from pipeline.step(pending, iteration)
                    if skipped:
                        iteration += skipped
                        continue
                finished = self._iteration(iteration)
                finished.frame_start = self.env.now  # moved by a pipeline's leap
                finished.callbacks.append(
                    lambda event, epoch=self.control.epoch: self._frame_done(event, epoch))
                pending.append(finished)
                iteration += 1
            if pending:
                yield self.env.all_of(pending)
        self.done.succeed()

    def _tenant_frame(self, iteration: int, epoch: int):
        """SimPy generator: one frame of a job sharing its device, held if its
        template's signature holds, else at kernel level and watched
        (:mod:`simulator.engine.tenant`)."""
        tenant = self.tenant
        if tenant.ready():
            state = self.state
            resume = yield from tenant.hold()
            if resume is not None:  # cut: the rest, its running kernels started
                # before anything queued (they were running), then what waits
                rest = (self._iteration(iteration, resume, state, start_running=True)
                        if epoch == self.control.epoch else None)
                for proc in dict.fromkeys(state.procs):
                    proc._dispatch()
                if rest is not None:
                    yield rest
        else:
            log = tenant.watch()
            yield self._iteration(iteration, log=log)
            tenant.watched(epoch)

    def _frame_done(self, finished: simpy.Event, epoch: int) -> None:
        """A pipelined iteration ended (its start is the event's ``frame_start``)."""
        self._record_iteration(finished.frame_start, epoch)
        if self.pipeline is not None and epoch == self.control.epoch:  # (not aborted)
            self.pipeline.completed(finished)

    def _stop(self, iteration: int) -> int:
        """The first iteration after ``iteration`` that does not follow it back to
        back: the next pause's, or the end."""
        every, stop = self.job.pause_every, self.job.iterations
        return min(stop, (iteration // every + 1) * every) if every else stop

    def _block(self, iteration: int, skip: frozenset) -> list[frozenset]:
        """The skipped rows of each iteration of a steady block starting at
        ``iteration``: up to the next pause or the end, stopping before the first
        iteration whose state was never recorded."""
        ff, plan = self.fast_forward, self.state.plan
        skips = [skip]
        for following in range(iteration + 1, self._stop(iteration)):
            following_skip = plan.skip(following) if plan.skip is not None else _NONE
            if not ff.known(ff.key(following_skip)):
                break
            skips.append(following_skip)
        return skips

    def _leap_budget(self, iteration: int, skip: frozenset) -> int:
        """How many iterations after ``iteration`` a fast-forward leap may complete
        (:mod:`simulator.engine.limit_cycle`): those before the next pause or the
        end that skip the same rows, none if a policy listens to every iteration."""
        if self.control.listeners or self.control.held:
            return 0
        plan, stop = self.state.plan, self._stop(iteration)
        if plan.skip is None:
            return stop - iteration - 1
        count = 0
        for following in range(iteration + 1, stop):
            if plan.skip(following) != skip:
                break
            count += 1
        return count

    def _resume(self, iteration: int, skip: frozenset,
                resume: tuple[frozenset, dict[int, float]]):
        """SimPy generator: the rest of an iteration whose replay entered a state
        with no record, at kernel level from now, from where the replay got to
        (``resume``: :meth:`FastForward.resume_point`). It records a part of an
        iteration for the new state (the next iterations, at kernel level until the
        state is known, record whole ones)."""
        ff = self.fast_forward
        ff.begin(skip, whole=False)
        finished = self._iteration(iteration, resume)
        ff.rebase()
        yield finished
        ff.end()

    def _pause(self):
        """SimPy generator: the job idles for ``job.pause`` seconds."""
        device = self.system.devices[self.job.device]
        ff = self.fast_forward
        if ff is not None:
            ff.boundary()
        device.begin_pause(ff.stride if ff is not None else None)
        energy, start = device.total_energy, self.env.now
        yield self.env.timeout(self.job.pause)
        device.end_pause()
        self.pause_time += self.env.now - start
        self.pause_energy += device.total_energy - energy

    def _iteration(self, iteration: int,
                   resume: tuple[frozenset, dict[int, float]] | None = None,
                   state: _PlanState | None = None, log: list | None = None,
                   start_running: bool = False) -> simpy.Event:
        """Start one iteration at kernel level; the event fires when it ends.

        Args:
            resume: the rest of a replayed or held iteration (:meth:`_resume`,
                :meth:`_tenant_frame`): rows done (they pass through like skipped
                ones) and the done fraction of each row running. Such a part
                iteration reports to no plan and no audit (its start was replayed).
            state: the plan it runs (the job's current one if None; a held frame
                cut after a new plan keeps its own).
            log: a tenant's watch: gets ``(row, task, end s)`` per kernel.
            start_running: the resumed running rows start at once, before the
                kernels queued on their processors (a held frame cut part-way: they
                were running).
        """
        if state is None:
            state = self.state  # in-flight iterations keep the plan they started with
        skip = state.plan.skip(iteration) if state.plan.skip is not None else _NONE
        ff = self.fast_forward
        weights = ff.weights(state, skip) if ff is not None else None
        if ff is not None:
            log = ff.log(state, skip) if resume is None else None
        running: dict[int, float] = {}
        if resume is not None:
            skip, running = skip | resume[0], resume[1]
        finished = self.env.event()
        control, epoch = self.control, self.control.epoch
        waiting = list(state.preds_count)
        left = [len(waiting)]
        # the iteration's index and priority offset: a pipeline's leap moves a frame in
        # flight by the frames it skipped (simulator.engine.pipeline)
        index = [iteration, iteration * state.priority_span if self.job.max_in_flight > 1
                 else 0.0]
        finished.index = index
        report = (IterationReport(self.job, iteration, state.plan, self.env.now, self.env.now)
                  if state.plan.adapt is not None and resume is None else None)
        if report is not None:
            finished.callbacks.append(lambda _event: self._adapt(state, report))
        finished.report, finished.state = report, state  # (a pipeline's leap reads them)
        check = (self.audit.iteration(self.job.name, iteration, state, skip,
                                      lambda: epoch == control.epoch)
                 if self.audit is not None and resume is None else None)
        if check is not None:
            finished.callbacks.append(lambda _event: check.finished(self.env.now))

        # the plan's per-row lists, looked up once per iteration, not per kernel
        labels, costs, units, shares = state.labels, state.costs, state.units, state.shares
        priorities, streams, procs = state.priorities, state.streams, state.procs
        fanout, download, job_name = state.fanout, state.download, self.job.name

        def release(row: int) -> None:
            if epoch != control.epoch:  # aborted: data still in transit is dropped
                return
            if skip and row in skip:
                pass_through(row)
                return
            if check is not None:
                check.released_kernel(row, self.env.now)
            share = shares[row]
            proc = procs[row]
            if control.shares:
                share = control.share_of(proc.name, share)
            task = Task(labels[row], costs[row], units[row], share, priorities[row] + index[1],
                        on_done, (job_name, index[0], row), streams[row])
            if running and row in running:  # resumed part-way (the processor runs the rest)
                task.done = running[row]
                if start_running:
                    control.track(task, proc, finished)
                    proc.start_now(task)
                    return
            control.track(task, proc, finished)
            proc.submit(task)

        def arrive(rows: list[int], producer: int = -1) -> None:
            if check is not None:
                check.arrived_from(producer, rows)
            for succ in rows:
                waiting[succ] -= 1
                if waiting[succ] == 0:
                    release(succ)

        def retire() -> None:
            left[0] -= 1
            if left[0] == 0 and not finished.triggered:
                finished.succeed()

        def pass_through(row: int) -> None:
            # Skipped kernels complete at once and move no data; iterative, so a
            # long chain of them does not recurse.
            stack = [row]
            while stack:
                current = stack.pop()
                if check is not None:
                    check.skipped(current, self.env.now)
                for _route, rows in state.fanout[current]:
                    for succ in rows:
                        waiting[succ] -= 1
                        if waiting[succ] == 0:
                            if succ in skip:
                                stack.append(succ)
                            else:
                                release(succ)
                retire()

        def on_done(task: Task) -> None:
            control.untrack(task)
            row = task.meta[2]
            if weights is not None:
                ff.progress += weights[row]
                if log is not None:
                    log.append((row, task.start, self.env.now))
            elif log is not None:  # a tenant's watch
                log.append((row, task, self.env.now))
            if report is not None:
                report.kernels.append((row, state.procs[row].name, task.start, self.env.now))
            if check is not None:
                check.done(row, task.start, self.env.now)
                self.audit.lanes(state.procs[row].name, task.lanes, task.start,
                                 self.env.now, task.label)
            for route, rows in fanout[row]:
                if route:
                    self._send(route, state.bytes_out[row], rows,
                               arrive if check is None else
                               lambda rows, row=row: arrive(rows, row), task.label, report)
                elif check is None:  # arrive(rows), inlined: once per kernel
                    for succ in rows:
                        count = waiting[succ] - 1
                        waiting[succ] = count
                        if count == 0:
                            release(succ)
                else:
                    arrive(rows, row)
            if download[row]:
                self._send(download[row], state.bytes_out[row], [-2],
                           lambda home, row=row: downloaded(row, home),
                           task.label + " (output)", report)
            else:  # retire(), inlined
                left[0] -= 1
                if left[0] == 0 and not finished.triggered:
                    finished.succeed()

        def downloaded(row: int, home: list[int]) -> None:
            if check is not None:
                check.arrived_from(row, home)
            retire()

        def uploaded(rows: list[int]) -> None:
            if check is not None:
                check.arrived_from(-1, rows)
            release(rows[0])

        # The first kernels, listed before any is released: a skipped one passes
        # through at once and may bring a successor's count to zero, and that
        # successor is released by the pass-through, not a second time here.
        for row in [row for row, count in enumerate(waiting) if count == 0]:
            if state.upload[row] and row not in skip:
                self._send(state.upload[row], state.bytes_in[row], [row], uploaded,
                           "input", report)
            else:
                release(row)
        if not waiting:
            finished.succeed()
        return finished

    def _adapt(self, state: _PlanState, report: IterationReport) -> None:
        """Give the finished iteration's report to its plan; switch to a returned plan."""
        report.end = self.env.now
        new_plan = state.plan.adapt(report)
        if new_plan is not None:
            self.state = self._compile(new_plan)

    def _send(self, route, nbytes: float, rows: list[int], arrive, label: str,
              report: IterationReport | None = None) -> None:
        """Move ``nbytes`` hop by hop along ``route``, then release ``rows``."""
        def hop(i: int) -> None:
            if i == len(route):
                arrive(rows)
            else:
                route[i].send(nbytes, lambda: hop(i + 1), label)
                if report is not None:
                    report.transfers.append((route[i].name, nbytes, *route[i].last_transfer))

        hop(0)


def home_processor(processors) -> str:
    """Where a job's input and output live: its device's first CPU cluster, or
    the first processor of a device without one (a DSP board)."""
    return next((name for name in processors if name.startswith("cpu.")),
                next(iter(processors)))


class _PlanState:
    """A plan compiled for execution: per kernel row its processor, cost, units,
    share, priority, and the routes its data takes.

    Args:
        system: devices and links.
        job: the job.
        plan: the policy's plan.
        resolve: ``(system, job, placement, row) -> (device, local, Processor)``.

    Raises:
        ConfigError: see :class:`JobRunner`.
    """

    @gc_paused  # many long-lived rows, no garbage: see simulator._gc
    def __init__(self, system: System, job: Job, plan: Plan, resolve):
        self.plan = plan
        trace = plan.trace if plan.trace is not None else job.trace
        n = self.size = len(trace)
        if len(plan.placements) != n or len(plan.priorities) != n:
            raise ConfigError(f"policy returned {len(plan.placements)} placements for a job "
                              f"of {n} kernels")
        table = trace.table
        columns = {c: table[c].tolist() for c in table.columns if c != "deps"}
        names = list(columns)
        rows = list(zip(*columns.values()))
        # What a kernel's cost depends on besides its placement: every column but
        # the id and the name. Rows alike on the same placement share one cost
        # (long traces repeat a few kernel shapes), so the cost model is asked
        # once per distinct row instead of once per row; a row that is not
        # alike (NaN included) is simply costed on its own.
        alike = itemgetter(*[i for i, c in enumerate(names) if c not in ("id", "name")])
        self.labels = [f"{job.name}/{kid}:{name}" for kid, name in
                       zip(columns["id"], columns["name"])]
        placements = plan.placements
        ids = list(map(id, placements))
        # A row's cost key: its placement object and its alike values. Rows are
        # costed once per distinct key, at the key's first row, in row order: the
        # rows the loop below visits are where a row-by-row loop would resolve a new
        # placement or ask the cost model, so a bad row fails at the same row.
        keys = zip(ids, map(alike, rows))
        first: dict = {}  # key -> the first row with it (each key hashed once, in C)
        firsts = list(map(first.setdefault, keys, range(n)))  # per row: that first row
        resolved: dict = {}  # placement (by equality) -> its place
        places: dict[int, tuple] = {}  # id of a placement -> its place
        costs: dict[int, object] = {}  # first row of a key -> the key's cost
        for row in first.values():  # (in row order: inserted so)
            placement = placements[row]
            place = places.get(ids[row])
            if place is None:
                place = resolved.get(placement)
                if place is None:
                    device, local, proc = resolve(system, job, placement, row, self.labels)
                    # one (device, local) tuple per placement, shared by its rows:
                    # comparing two rows' places is then mostly an identity test
                    place = resolved[placement] = (device, local, proc, (device, local))
                places[ids[row]] = place
            device, local = place[0], place[1]
            record = dict(zip(names, rows[row]))
            try:
                costs[row] = system.devices[device].cost_model.kernel_cost(
                    local, placement.units, record, placement.library,
                    placement.memory_share)
            except Unsupported as err:
                raise ConfigError(f"kernel {self.labels[row]} ({record['op']}, "
                                  f"{record['precision']}) cannot run: {err}") from None
        # the per-row lists, in C (map) from those few entries
        row_places = list(map(places.__getitem__, ids))
        self.where: list[tuple[str, str]] = list(map(itemgetter(3), row_places))
        self.procs = list(map(itemgetter(2), row_places))
        self.costs = list(map(costs.__getitem__, firsts))
        self.units = [placement.units for placement in placements]
        self.shares = [placement.share for placement in placements]
        # a stream is a thread of this job: (job, name)
        streams = {pid: (job.name, placement.stream) if placement.stream is not None
                   else None for pid, placement in dict(zip(ids, placements)).items()}
        self.streams = list(map(streams.__getitem__, ids))
        self.priorities = list(plan.priorities)
        # pipelined iterations: every priority of iteration i+1 comes after iteration i's
        self.priority_span = (max(self.priorities) - min(self.priorities) + 1.0
                              if self.priorities else 1.0)
        self.bytes_out = table["bytes_out"].to_numpy(dtype=float)
        self.bytes_in = table["bytes_in"].to_numpy(dtype=float)
        home = (job.device, home_processor(system.device(job.device).processors))
        # () where no data moves: one shared empty route, not a list per row
        self.upload = [system.route(home, self.where[row]) if not preds else ()
                       for row, preds in enumerate(trace.preds)]
        self.download = [system.route(self.where[row], home) if not succs else ()
                         for row, succs in enumerate(trace.succs)]
        self.preds = trace.preds
        self.preds_count = [len(p) for p in trace.preds]
        # fast-forward's per-plan data (simulator.engine.fast_forward._PlanData), made
        # on first use: it lives and dies with the plan
        self.fast_forward = None
        # successors grouped by the route their data takes
        self.fanout: list[list[tuple[list, list[int]]]]
        where = self.where
        if where and len(set(where)) == 1:
            # every row in one place (a plan on one processor): a row's successors
            # are one group, on that place's route to itself (what the loop below
            # comes to, with a list per row instead of a loop step)
            route = system.route(where[0], where[0]) if any(trace.succs) else []
            self.fanout = [[(route, list(succs))] if succs else [] for succs in trace.succs]
            self.moves_data = bool(any(self.upload) or any(self.download) or route)
            return
        self.fanout = []
        routes: dict[tuple, tuple[list, tuple]] = {}  # (src, dst) -> (route, its key)
        place = where.__getitem__
        for row, succs in enumerate(trace.succs):
            # most rows: one successor, or all of them on one processor (one group,
            # without the grouping dict)
            destinations = (where[succs[0]],) if len(succs) == 1 else set(map(place, succs))
            if len(destinations) == 1:
                pair = (where[row], *destinations)
                found = routes.get(pair)
                if found is None:
                    route = system.route(*pair)
                    found = routes[pair] = (route, tuple(id(c) for c in route))
                self.fanout.append([(found[0], list(succs))])
                continue
            groups: dict[tuple, tuple[list, list[int]]] = {}
            for succ in succs:
                pair = (where[row], where[succ])
                found = routes.get(pair)
                if found is None:
                    route = system.route(*pair)
                    found = routes[pair] = (route, tuple(id(c) for c in route))
                route, key = found
                group = groups.get(key)
                if group is None:
                    group = groups[key] = (route, [])
                group[1].append(succ)
            self.fanout.append(list(groups.values()))
        # whether data crosses a link (an upload, a download, a route between rows)
        self.moves_data = (any(self.upload) or any(self.download)
                           or any(route for groups in self.fanout for route, _rows in groups))

    def renewed(self, plan: Plan) -> _PlanState:
        """A new state of ``plan``, compiled as this one (its tables shared: nothing
        changes them once compiled), without fast-forward's data
        (:meth:`JobRunner._compile`)."""
        state = copy.copy(self)
        state.plan, state.fast_forward = plan, None
        return state
