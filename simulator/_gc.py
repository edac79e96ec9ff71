"""Keeping Python's cyclic garbage collector out of the way of big builds and runs.

Building a run (a trace table, a compiled plan: tens of thousands of tuples,
lists and dicts that all stay alive) triggers many collections that find
nothing to free, and every full collection walks all of them again; on a
20,000-kernel trace that was a third of the run's wall time. These helpers
change only *when* the collector runs, never what a run computes.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager


def gc_paused(func: Callable) -> Callable:
    """Decorate a builder that allocates many long-lived objects and little
    garbage: the collector is off while it runs (and back on, if it was, after,
    also when it raises). Garbage cycles it leaves are collected later."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if not gc.isenabled():
            return func(*args, **kwargs)
        gc.disable()
        try:
            return func(*args, **kwargs)
        finally:
            gc.enable()
    return wrapper


@contextmanager
def gc_frozen() -> Iterator[None]:
    """Move every object alive now out of the collector's sight for the block
    (``gc.freeze``): a long run's full collections then walk only what the run
    allocates, not the trace, the plan and the modules. Objects become
    collectable again when the block ends. Does nothing if something else froze
    objects already (its freeze is left alone)."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
