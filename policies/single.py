"""``single``: every kernel on one processor (the usual framework baseline).

Like the frameworks it models (TFLite, MNN), it runs one operator at a time in
topological order, each on all its threads: independent branches do not
overlap. ``processor`` may also list several CPU clusters
(``[cpu.prime, cpu.gold]``): the thread pool then runs each operator on
``cores`` threads taken from the clusters in the order listed, with an equal
share of the work per thread.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from simulator.errors import ConfigError
from simulator.policy import POLICIES, Job, Placement, Plan, Policy

from .split import serialize, split_across


@POLICIES.register("single")
class Single(Policy):
    """Run the whole workload on one processor (or one thread pool over clusters).

    Args:
        processor: dotted processor name (``cpu.gold``, ``gpu``, ``dsp``), or a
            list of CPU clusters to draw cores from, in order.
        cores: units to use (cores, DSP contexts); all if None. With a list,
            the total number of threads.
        fallback: processor for kernels the main one cannot run (e.g.
            FP32-only ops when ``processor: dsp``); None makes them an error.
        library: the framework whose kernels run (``pytorch``): a processor with
            that ``libraries`` table is costed with it, others with their own
            numbers; None: the processors' own numbers.
    """

    name = "single"

    def __init__(self, processor: str | Annotated[list[str], Field(min_length=1)] = "cpu.gold",
                 cores: Annotated[int, Field(ge=1)] | None = None,
                 fallback: str | None = None, library: str | None = None):
        self.processor = processor
        self.cores = cores
        self.fallback = fallback
        self.library = library

    def _spec(self, job: Job, processor: str):
        return self.context.require_processor(processor, job.device)

    def _pool(self, job: Job) -> list[tuple[Placement, float]]:
        """(placement, work fraction) per cluster used."""
        names = self.processor if isinstance(self.processor, list) else [self.processor]
        available = sum(self._spec(job, name).units for name in names)
        wanted = self.cores or available
        if wanted > available:
            raise ConfigError(f"{' + '.join(names)} have {available} cores; {wanted} "
                              "requested", path="cores")
        parts, left = [], wanted
        for name in names:
            take = min(left, self._spec(job, name).units)
            if take:
                parts.append((Placement(name, take, library=self.library), take / wanted))
            left -= take
        return parts

    def _check_library(self, job: Job, names: list[str]) -> None:
        """Reject a ``library`` no chosen processor has (a typo would silently
        cost every kernel with the processors' own numbers)."""
        if self.library is None:
            return
        if not any(self.library in self._spec(job, name).libraries for name in names):
            known = sorted({lib for name in names for lib in self._spec(job, name).libraries})
            raise ConfigError(f"no processor among {', '.join(names)} has a "
                              f"{self.library!r} libraries table (known: "
                              f"{', '.join(known) or 'none'})", path="library")

    def plan(self, job: Job) -> Plan:
        names = self.processor if isinstance(self.processor, list) else [self.processor]
        self._check_library(job, names + ([self.fallback] if self.fallback else []))
        parts = self._pool(job)
        serial = serialize(job.trace)
        if len(parts) > 1:
            trace, placements = split_across(serial, parts)
            return Plan(placements, trace=trace)
        main = parts[0][0]
        backup = None
        if self.fallback is not None:
            backup = Placement(self.fallback, self._spec(job, self.fallback).units,
                               library=self.library)
        placements = []
        for row in range(len(job.trace)):
            placement = main
            if backup is not None and self.context.duration(
                    job, row, main.processor, main.units, main.library) == float("inf"):
                placement = backup
            placements.append(placement)
        return Plan(placements, trace=serial)
