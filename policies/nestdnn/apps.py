"""The run-time state of one app of a NestDNN run (:class:`AppState`)."""

from __future__ import annotations

from dataclasses import dataclass

from workloads.multicapacity.profile import AppProfile


@dataclass
class AppState:
    """Run-time state of one app.

    Attributes:
        name: the app; job: its job's name.
        profile: its multi-capacity model (latencies filled in).
        baseline: index of the descendant the status quo runs (the baseline policy's
            profile has the baseline models as its descendants).
        reference: accuracy of the app's baseline model (gains are measured against it).
        running: started and not killed.
        resident: descendant in memory (-1: none).
        active: descendant whose plan the job runs (-1: none yet).
        target: descendant the scheduler chose.
        loading: a page-in is in progress.
        share: compute share.
        priority: cost weight.
        alive: seconds running (loading included); serving: seconds with a model.
        accuracy_time: integral of the serving descendant's accuracy over time.
        gain_time: integral of (accuracy - baseline accuracy) over time.
    """

    name: str
    job: str
    profile: AppProfile
    baseline: int
    reference: float = 0.0
    running: bool = False
    resident: int = -1
    active: int = -1
    target: int = -1
    loading: bool = False
    share: float = 1.0
    priority: float = 1.0
    since: float = 0.0
    alive: float = 0.0
    serving: float = 0.0
    accuracy_time: float = 0.0
    gain_time: float = 0.0
    frames: int = 0
    idle: bool = False  # waiting for the camera's next frame
    effective: float = 0.0  # share applied to the job now
    share_time: float = 0.0  # integral of the applied share over time (s)
    share_since: float = 0.0

    def sizes(self) -> list[float]:
        return [d.memory for d in self.profile.descendants]
