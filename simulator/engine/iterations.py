"""The start and end of a job's completed iterations: kept, or folded into totals.

A 150-epoch training run completes ~117 k iterations (batches); kept as a list
of ``(start, end)`` tuples they cost ~112 bytes each (the tuple, two floats, a
list slot): 13 MB, growing with the run. What reads them:

* the engine's metrics: their number and the sum of their durations
  (``latency_s``, ``active_time_s``): running totals;
* a pacer and policies at run time (:class:`~simulator.engine.control.Pacer`,
  FlexDNN's adaptation): the last one and how many;
* a policy's own :meth:`~simulator.policy.Policy.metrics` may walk them all.

So an :class:`IterationLog` always keeps the count, the summed duration and the
last pair, and keeps every pair (two doubles in one flat array: 16 bytes an
iteration, handed out as tuples on demand) only when asked to
(``keep``: :meth:`Simulation.plan <simulator.engine.simulation.Simulation.plan>`
decides: the policy's metrics read records, or several jobs share the run), and
from the moment a listener is attached to the job's completed iterations
(:meth:`JobHandle.on_iteration <simulator.engine.job_handle.JobHandle.on_iteration>`:
a plugin reading the history while the run goes on; :meth:`keep_from_now`).
Unkept, it holds nothing per iteration, and asking for an earlier pair is an
error that says why.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence


class IterationLog(Sequence):
    """``(start_s, end_s)`` of each completed iteration, in completion order.

    Args:
        keep: keep every pair (else only the count, the summed duration and the last).

    Attributes:
        busy: the completed iterations' durations added left to right in
            completion order (s): ``busy += end - start`` per iteration, on every
            Python (not ``sum()``, which compensates from 3.12).
    """

    __slots__ = ("_flat", "_first", "_count", "_last", "busy")

    def __init__(self, keep: bool = True):
        self._flat = array("d") if keep else None  # start, end, start, end, ... (s)
        self._first = 0  # index of the first kept pair
        self._count = 0
        self._last: tuple[float, float] | None = None
        self.busy = 0.0

    @property
    def kept(self) -> bool:
        """Whether every pair is kept (else only the last)."""
        return self._flat is not None and self._first == 0

    @property
    def stored(self) -> int:
        """How many ``(start, end)`` pairs the log holds (its memory, 16 bytes each)."""
        return 0 if self._flat is None else len(self._flat) // 2

    def keep_from_now(self) -> None:
        """Keep every pair from the next completed iteration on (the earlier ones,
        if not kept, stay unavailable but the last)."""
        if self._flat is None:
            self._flat = array("d")
            self._first = self._count

    def append(self, span: tuple[float, float]) -> None:
        """Add one completed iteration's ``(start_s, end_s)``."""
        start, end = span
        self._count += 1
        self._last = (start, end)
        self.busy += end - start
        if self._flat is not None:
            self._flat.append(start)
            self._flat.append(end)

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError("iteration index out of range")
        if self._flat is None or index < self._first:
            if index == self._count - 1:
                return self._last
            raise _not_kept(index)
        index -= self._first
        return self._flat[2 * index], self._flat[2 * index + 1]

    def __iter__(self) -> Iterator[tuple[float, float]]:
        if not self.kept:
            if self._count:
                raise _not_kept(0)
            return iter(())
        values = iter(self._flat)  # pairs without a copy (a slice costs 16 B an iteration)
        return zip(values, values)

    def __repr__(self) -> str:
        return f"IterationLog({self._count} iterations, {'kept' if self.kept else 'totals'})"


def _not_kept(index: int) -> LookupError:
    return LookupError(
        f"iteration {index}'s times were not kept: a run keeps every (start, end) only "
        "if the policy's metrics() read records or iterations "
        "(Policy.metrics_read_records, metrics_read_iterations), several jobs share the "
        "run, or (from then on) an on_iteration listener is attached to the job; else "
        "only the count, the summed duration and the last pair "
        "(simulator.engine.iterations)")
