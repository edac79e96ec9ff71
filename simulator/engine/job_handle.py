"""What a policy holds of one running job: :class:`JobHandle`.

A policy's own SimPy processes (started with
:meth:`simulator.policy.PolicyContext.start`) drive jobs at run time through
handles from :meth:`~simulator.policy.PolicyContext.job`: apps that start,
are killed, share a processor, switch models or wait for camera frames. The
handle is the policy-facing face of a job runner and its
:class:`~simulator.engine.control.RunControl`; what each action does to
kernels in flight is described in :mod:`simulator.engine.control`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .control import Pacer

if TYPE_CHECKING:
    from ..policy import Job, Plan
    from .job_runner import JobRunner


class JobHandle:
    """Run-time control of one job (see the module docstring).

    Args:
        runner: the job's runner (engine side; policies never see it).
    """

    def __init__(self, runner: JobRunner):
        self._runner = runner

    def __repr__(self) -> str:
        return f"JobHandle({self.name!r})"

    # -- what the job is ---------------------------------------------------
    @property
    def job(self) -> Job:
        """The job (name, trace, device, iterations...)."""
        return self._runner.job

    @property
    def name(self) -> str:
        """The job's name (unique in the run)."""
        return self._runner.job.name

    @property
    def device(self) -> str:
        """Name of the device the job runs on."""
        return self._runner.job.device

    @property
    def iteration_times(self) -> Sequence[tuple[float, float]]:
        """``(start_s, end_s)`` of every completed iteration so far, in completion order
        (a read-only sequence: :class:`~simulator.engine.iterations.IterationLog`).
        Its length and last pair are always there; earlier pairs when the
        policy's metrics read records (:attr:`Policy.metrics_read_records`) or
        several jobs share the run, and else those completed after the first
        :meth:`on_iteration` listener was attached."""
        return self._runner.iteration_times

    @property
    def epoch(self) -> int:
        """A counter :meth:`abort` bumps: compare it to tell whether the job was
        aborted since a moment of interest (a model load that outlived its app)."""
        return self._runner.control.epoch

    @property
    def stopped(self) -> bool:
        """Whether :meth:`stop` was called."""
        return self._runner.control.stopped

    # -- what a policy does --------------------------------------------------
    def suspend(self) -> None:
        """Start no new iteration until :meth:`resume` (the one in flight finishes);
        suspended at time 0, the job is an app not yet started."""
        self._runner.control.suspend()

    def resume(self) -> None:
        """Let iterations start again."""
        self._runner.control.resume()

    def stop(self) -> None:
        """Start no new iteration, ever; the job ends after the current one and
        counts as completed."""
        self._runner.control.stop()

    def abort(self) -> None:
        """Drop the iteration in flight: its kernels leave their processors
        unrecorded and it does not count. ``suspend()`` then ``abort()`` kills an app."""
        self._runner.control.abort()

    def set_share(self, share: float, processor: str | None = None) -> None:
        """Give the job's kernels (on ``processor``, or all) ``share`` in (0, 1] of
        their units from now on, those in flight included, whatever the plan says."""
        self._runner.set_share(share, processor)

    def replan(self, plan: Plan) -> None:
        """Run ``plan`` for the iterations started from now on (switching models);
        iterations in flight keep theirs."""
        self._runner.replan(plan)

    def on_iteration(self, listener: Callable[[JobHandle], None]) -> None:
        """Call ``listener(handle)`` after each completed iteration (frame counters,
        stopping after N inferences, adapting to measured latencies). From now on
        every iteration's times are kept (:attr:`iteration_times`): a listener
        may read the history."""
        self._runner.iteration_times.keep_from_now()
        self._runner.control.listeners.append(lambda _runner: listener(self))

    def pace(self, interval: float, on_wait: Callable[[JobHandle], None] | None = None,
             on_ready: Callable[[JobHandle], bool | None] | None = None) -> Pacer:
        """Start iterations at most every ``interval`` seconds (camera frames).

        Args:
            interval: seconds between frames (> 0).
            on_wait: called with the handle when the job starts waiting for a frame.
            on_ready: called with the handle when the next frame is due; the job
                resumes unless it returns False.
        """
        wait = (lambda _runner: on_wait(self)) if on_wait is not None else None
        ready = (lambda _runner: on_ready(self)) if on_ready is not None else None
        return Pacer(self._runner, interval, wait, ready)
