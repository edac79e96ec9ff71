"""Run-time control of a job: suspend, resume, stop, abort, change its share.

Apps on a phone start and stop while others run, and a scheduler re-divides
the processors among them (NestDNN). Every :class:`~simulator.engine.
job_runner.JobRunner` has a :class:`RunControl` (``runner.control``), and a
policy drives it from its own SimPy processes through the job's
:class:`~simulator.engine.job_handle.JobHandle` (``PolicyContext.job(name)``,
available once the run starts), whose methods map onto these:

* ``suspend()``: no new iteration starts until ``resume()`` (the one in
  flight finishes); a job suspended at time 0 is an app not yet started;
* ``stop()``: no new iteration ever starts; the job is done when the current
  one finishes (counts as completed in the run's metrics);
* ``abort()``: the iteration in flight is dropped at once: its queued and
  running kernels are withdrawn from their processors (freeing their units,
  not recorded), data still in transit is ignored, and it does not count as a
  completed iteration. ``suspend()`` then ``abort()`` is killing an app;
* ``runner.set_share(share, processor=None)``: the job's kernels from now on,
  and those queued or running, get ``share`` of their units whatever the plan
  says (running ones are re-timed like on an OPP change: the work done is kept);
* ``runner.replan(plan)``: iterations started from now on run ``plan`` (a
  policy switching the job's model); the one in flight keeps its plan;
* ``listeners``: callables receiving the runner after each completed
  iteration (frame counters, stopping after N inferences);
* :class:`Pacer`: iterations start at most every ``interval`` s, as frames
  arriving from a camera (a fast job waits for the next frame).

Aborting applies to kernel-level iterations and to a frame of a job sharing its
device held whole (:mod:`simulator.engine.tenant`: dropped at once); a
fast-forward replay, used by jobs alone on their device, runs to its end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import simpy

from .processor import Processor, Task


class RunControl:
    """The run-time state a policy can change for one job (see the module docstring).

    Args:
        env: the SimPy environment.
    """

    def __init__(self, env: simpy.Environment):
        self.env = env
        self.gate: simpy.Event | None = None  # set while suspended
        self.stopped = False
        self.epoch = 0  # bumped by abort(): iterations of an older epoch are dropped
        self.inflight: dict[Task, Processor] = {}
        # end events of iterations in flight, in the order their first kernel was
        # submitted (a dict: pipelined iterations interleave their kernels)
        self.open: dict[simpy.Event, None] = {}
        self.aborted = 0  # iterations dropped
        self.shares: dict[str | None, float] = {}  # share set at run time, by processor
        # called with the runner after each completed iteration (frame counters)
        self.listeners: list[Callable[[object], None]] = []
        # called with no argument when a policy changes the run (suspend, stop, abort,
        # reshare, replan): a fast-forward block ends after its iteration in progress then
        self.watchers: list[Callable[[], None]] = []

    # -- what the runner asks ----------------------------------------------
    @property
    def held(self) -> bool:
        """Whether the next iteration must not start right away."""
        return self.gate is not None or self.stopped

    def wait(self) -> Iterator[simpy.Event]:
        """SimPy generator: wait while suspended (returns at once when stopped)."""
        while self.gate is not None and not self.stopped:
            yield self.gate

    def track(self, task: Task, processor: Processor, finished: simpy.Event) -> None:
        """Note a kernel submitted for the iteration ending with ``finished``."""
        self.inflight[task] = processor
        open_events = self.open
        if finished not in open_events:
            # A new iteration: forget those that ended. (A list re-filtered whenever
            # the last entry was another iteration's grew a duplicate per switch with
            # 8 frames in flight, ~560 entries, and its filtering took 57 % of a
            # pipelined DynO run.)
            for event in [event for event in open_events if event.triggered]:
                del open_events[event]
            open_events[finished] = None

    def untrack(self, task: Task) -> None:
        """Note a kernel finished."""
        self.inflight.pop(task, None)

    # -- what a policy does ------------------------------------------------
    def suspend(self) -> None:
        """Start no new iteration until :meth:`resume`."""
        if self.gate is None:
            self.gate = self.env.event()
        self._changed()

    def resume(self) -> None:
        """Let iterations start again."""
        gate, self.gate = self.gate, None
        if gate is not None:
            gate.succeed()

    def stop(self) -> None:
        """Start no new iteration, ever; the job ends after the current one."""
        self.stopped = True
        self.resume()
        self._changed()

    def abort(self) -> None:
        """Drop the iteration in flight: withdraw its kernels, end it uncounted."""
        self._changed()
        self.epoch += 1
        inflight, self.inflight = self.inflight, {}
        for task, processor in inflight.items():
            processor.cancel(task)
        open_events, self.open = self.open, {}
        for event in open_events:
            if not event.triggered:
                self.aborted += 1
                event.succeed()

    def reshare(self, share: float, processor: str | None = None) -> None:
        """Give the job's kernels (on ``processor``, or all) ``share`` of their units:
        those in flight now and those released later (whatever their plan says)."""
        if not 0.0 < share <= 1.0:
            raise ValueError(f"share must be in (0, 1]; got {share!r}")
        if processor is None:
            self.shares.clear()
        self.shares[processor] = share
        self._changed()
        for task, proc in list(self.inflight.items()):
            if processor is None or proc.name == processor:
                proc.reshare(task, share)

    def replanned(self) -> None:
        """Note a new plan for the iterations started from now on."""
        self._changed()

    def _changed(self) -> None:
        for watcher in list(self.watchers):
            watcher()

    def share_of(self, processor: str, planned: float) -> float:
        """The share a kernel placed on ``processor`` gets (``planned`` if none was set)."""
        shares = self.shares
        return shares.get(processor, shares.get(None, planned))


class Pacer:
    """Starts a job's iterations at most every ``interval`` seconds (a camera's frames).

    After each iteration, if the next frame is not due yet, the job is
    suspended until it is: an iteration that took longer than the interval is
    followed at once by the next (the latest frame), a faster one waits.

    Args:
        runner: the job's runner.
        interval: seconds between frames.
        on_wait: called with the runner when the job starts waiting.
        on_ready: called with the runner when the next frame is due; the job
            resumes unless it returns False (e.g. its app was stopped meanwhile).
    """

    def __init__(self, runner, interval: float, on_wait: Callable | None = None,
                 on_ready: Callable | None = None):
        if interval <= 0:
            raise ValueError(f"a frame interval must be positive; got {interval!r}")
        self.runner = runner
        self.interval = interval
        self.on_wait = on_wait
        self.on_ready = on_ready
        self.waiting = False
        runner.control.listeners.append(self._done)

    def _done(self, runner) -> None:
        control, env = runner.control, runner.env
        wait = runner.iteration_times[-1][0] + self.interval - env.now
        if wait <= 1e-12 or control.stopped:
            return
        self.waiting = True
        control.suspend()
        if self.on_wait is not None:
            self.on_wait(runner)
        epoch = control.epoch
        env.timeout(wait).callbacks.append(lambda _event: self._ready(epoch))

    def _ready(self, epoch: int) -> None:
        control = self.runner.control
        if control.epoch != epoch:
            return  # aborted meanwhile: whoever aborted decides when it runs again
        self.waiting = False
        if self.on_ready is None or self.on_ready(self.runner) is not False:
            control.resume()
