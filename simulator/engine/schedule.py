"""One kernel-level iteration's schedule: where a cut replay hands over.

A fast-forward replay (:mod:`simulator.engine.fast_forward`) runs an iteration
as one progress counter at its state's recorded rate: progress ``p`` is reached
after the share ``p`` of the iteration's time. When the replay enters a state
with no record, kernel level takes over the rest of the iteration, and needs
the kernels' state at that point. It takes it from the schedule of a whole
kernel-level iteration of the same plan (the first that ran: each kernel's
start and end): at the share ``p`` of that iteration's time, the kernels ended
are done, those running are done in proportion to their run, the others wait
(:meth:`Schedule.at`). That is a state kernel level itself passed through, with
kernels that ran side by side (a layer split across two CPU clusters) still
side by side; handing over a prefix of the kernels in their completion order
instead would run such pairs one after the other and lose their overlap.
"""

from __future__ import annotations

import numpy as np


class Schedule:
    """Where each kernel of one kernel-level iteration ran.

    Args:
        start: the iteration's start (s).
        log: ``(row, start s, end s)`` of every kernel that ran in it.
    """

    def __init__(self, start: float, log: list[tuple[int, float, float]]):
        # 20 bytes a row: int32 rows (a plan has far fewer than 2^31), float64 times
        self.rows = np.array([entry[0] for entry in log], dtype=np.int32)
        self.starts = np.array([entry[1] for entry in log]) - start
        self.ends = np.array([entry[2] for entry in log]) - start
        self.span = float(self.ends.max()) if len(log) else 0.0  # s

    def at(self, progress: float) -> tuple[frozenset, dict[int, float]]:
        """The rows done after the share ``progress`` of the iteration's time, and
        the done fraction of each row running then."""
        t = progress * self.span
        done = self.rows[self.ends <= t]
        running = (self.starts <= t) & (self.ends > t)
        fractions = (t - self.starts[running]) / (self.ends[running] - self.starts[running])
        return (frozenset(done.tolist()),
                dict(zip(self.rows[running].tolist(), fractions.tolist())))
