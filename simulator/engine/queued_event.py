"""An event the engine puts straight onto SimPy's queue.

Why: a kernel's end is the engine's most frequent event (one per kernel, and a
new one per re-timing), and the device's sampler wakes every thermal step. A
``simpy.Timeout`` per kernel costs the Timeout, its callback list and a
callback object, and a sampler written as a SimPy ``Process`` resumes a
generator through SimPy at every wake. Instead the object that knows what to
do (a kernel's completion, a sampler wake) is itself the event: it is pushed
onto ``env._queue`` at the time, priority and queue position SimPy would have
given the event it replaces (``now + delay``; NORMAL for a ``Timeout``, URGENT
for an ``Initialize`` or ``Interruption``; the next event id, so ties keep
their order), and the run is the same to the bit.

:meth:`simpy.Environment.step` reads of an event only ``callbacks`` (called
with the event, then set to None) and ``_ok`` (never False here: these events
do not fail), so that is all :class:`QueuedEvent` has. ``env._queue`` (a heap of
``(time, priority, event id, event)``), ``env._eid`` and ``env._now`` are
SimPy's private API: setup.cfg pins simpy to the 4.1 series for them (as for
fast-forward's own uses, ``fast_forward._horizon``).
"""

from __future__ import annotations

from heapq import heappush

from simpy.events import NORMAL, URGENT

__all__ = ["NORMAL", "URGENT", "QueuedEvent"]


class QueuedEvent:
    """An event on SimPy's queue from the moment it is made.

    ``QueuedEvent(env, at, priority, callback)`` queues the new event for time
    ``at`` (s, absolute) with ``priority`` (:data:`NORMAL` or :data:`URGENT`);
    SimPy calls ``callback(event)`` when it comes up. A subclass adds its own
    ``__slots__`` for what the callback reads, set by the caller right after
    construction (before SimPy can run the event: nothing runs in between).
    The push is part of the constructor, so that queuing an event is one call,
    as a ``Timeout`` is: this runs once per kernel.
    """

    __slots__ = ("callbacks",)
    _ok = True  # never fails

    def __init__(self, env, at: float, priority: int, callback) -> None:
        self.callbacks = [callback]
        heappush(env._queue, (at, priority, next(env._eid), self))
