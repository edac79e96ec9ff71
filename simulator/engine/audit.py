"""Run-time checks of the engine's promises, for tests and policy authors.

``simulate(..., audit=True)`` gives every job runner an :class:`Audit`. The
runner tells it what it does (a kernel released, a kernel skipped, data
arrived, a kernel done, an iteration finished) and the audit checks each step
against the trace itself, never against the runner's own counters, which is
where a bookkeeping bug hides (a kernel released twice, an iteration ending
early). The promises:

* every kernel row of every iteration completes exactly once: it runs, or the
  plan skips it;
* no kernel is released before every predecessor has completed and the data
  that predecessor produced in another address space has arrived; a first
  kernel placed off the job's home memory waits for the uploaded input;
* a processor starts a kernel only once it is released;
* no lane (core) of a processor runs two kernels at once.

A broken promise raises :class:`InvariantViolation` at once, naming the job,
iteration, kernel and times. Iterations dropped by ``abort()`` are exempt from
the end-of-iteration check (their kernels are withdrawn on purpose), and so
are iterations replayed by fast-forward (no kernel runs in them).
"""

from __future__ import annotations

# Times come from one float clock; a successor released in the same instant as
# its predecessor's end may differ from it by rounding only.
_EPS_S = 1e-12


class InvariantViolation(AssertionError):
    """The engine broke one of its promises (a simulator bug, not bad input)."""


class Audit:
    """Checks one run; see the module docstring.

    Attributes:
        iterations: iterations whose every kernel was checked to the end.
        kernels: kernels checked.
    """

    def __init__(self):
        self.iterations = 0
        self.kernels = 0
        self._lane_free: dict[tuple[str, int], float] = {}  # (processor, lane) -> s

    def iteration(self, job_name: str, iteration: int, state, skip: frozenset[int],
                  alive) -> IterationAudit:
        """Start checking one iteration.

        Args:
            job_name: the job's name (for messages).
            iteration: the iteration's index.
            state: the runner's compiled plan (``preds``, ``fanout``, ``upload``, ``labels``).
            skip: rows the plan skips in this iteration.
            alive: ``() -> bool``, False once the iteration was aborted.
        """
        return IterationAudit(self, job_name, iteration, state, skip, alive)

    def lanes(self, processor: str, lanes: tuple[int, ...], start: float, end: float,
              label: str) -> None:
        """Check that a finished kernel's lanes were free when it started."""
        for lane in lanes:
            free = self._lane_free.get((processor, lane), 0.0)
            if start < free - _EPS_S:
                raise InvariantViolation(
                    f"{processor} lane {lane}: {label} started at {start:.9g} s while "
                    f"the lane was busy until {free:.9g} s")
            self._lane_free[(processor, lane)] = end


class IterationAudit:
    """The checks of one iteration of one job (made by :meth:`Audit.iteration`)."""

    def __init__(self, audit: Audit, job_name: str, iteration: int, state,
                 skip: frozenset[int], alive):
        self.audit = audit
        self.where = f"job {job_name!r} iteration {iteration}"
        self.labels = state.labels
        self.preds = state.preds
        self.skip = skip
        self.alive = alive
        # (producer, consumer) pairs whose data crosses address spaces; producer
        # -1 is the job's input uploaded to a first kernel
        self.crossing = {(row, succ) for row, groups in enumerate(state.fanout)
                         for route, rows in groups if route for succ in rows}
        self.crossing |= {(-1, row) for row, route in enumerate(state.upload) if route}
        # consumer -2 is the job's home memory, where a last kernel's output goes
        self.downloads = {(row, -2) for row, route in enumerate(state.download) if route}
        self.arrived: set[tuple[int, int]] = set()
        self.released: dict[int, float] = {}
        self.completed: dict[int, float] = {}

    def _fail(self, message: str) -> None:
        raise InvariantViolation(f"{self.where}: {message}")

    def _check_ready(self, row: int, now: float, data: bool) -> None:
        if row in self.released:
            self._fail(f"{self.labels[row]} released twice (at "
                       f"{self.released[row]:.9g} s and {now:.9g} s)")
        for pred in self.preds[row]:
            if pred not in self.completed:
                self._fail(f"{self.labels[row]} released at {now:.9g} s before its "
                           f"dependency {self.labels[pred]} completed")
            if (data and pred not in self.skip and (pred, row) in self.crossing
                    and (pred, row) not in self.arrived):
                self._fail(f"{self.labels[row]} released at {now:.9g} s before the "
                           f"data of {self.labels[pred]} arrived")
        if data and not self.preds[row] and (-1, row) in self.crossing \
                and (-1, row) not in self.arrived:
            self._fail(f"{self.labels[row]} released at {now:.9g} s before its input "
                       "was uploaded")
        self.released[row] = now

    def released_kernel(self, row: int, now: float) -> None:
        """A kernel was submitted to its processor."""
        if self.alive():
            self._check_ready(row, now, data=True)

    def skipped(self, row: int, now: float) -> None:
        """A skipped kernel completed at once (it moves no data)."""
        if self.alive():
            self._check_ready(row, now, data=False)
            self.completed[row] = now

    def arrived_from(self, producer: int, rows: list[int]) -> None:
        """``producer``'s data (-1: the job's input) reached ``rows``' address space
        (-2: the job's home memory)."""
        if self.alive():
            if producer >= 0 and producer not in self.completed:
                self._fail(f"data of {self.labels[producer]} arrived before it completed")
            self.arrived.update((producer, row) for row in rows)

    def done(self, row: int, start: float, end: float) -> None:
        """A kernel ran from ``start`` to ``end``."""
        if not self.alive():
            return
        released = self.released.get(row)
        if released is None:
            self._fail(f"{self.labels[row]} ran without being released")
        if start < released - _EPS_S:
            self._fail(f"{self.labels[row]} started at {start:.9g} s, before its "
                       f"release at {released:.9g} s")
        if row in self.completed:
            self._fail(f"{self.labels[row]} completed twice")
        self.completed[row] = end
        self.audit.kernels += 1

    def finished(self, now: float) -> None:
        """The iteration ended: every row must have completed exactly once."""
        if not self.alive():
            return
        missing = [self.labels[row] for row in range(len(self.preds))
                   if row not in self.completed]
        if missing:
            more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
            self._fail(f"ended at {now:.9g} s with {len(missing)} kernel(s) never run: "
                       f"{', '.join(missing[:3])}{more}")
        for row, home in self.downloads:
            if row not in self.skip and (row, home) not in self.arrived:
                self._fail(f"ended at {now:.9g} s before the output of {self.labels[row]} "
                           "was downloaded")
        self.audit.iterations += 1
