"""Cappuccino's baseline: the single-threaded Java program (CNNdroid is :mod:`.cnndroid`).

* ``single-thread``: the paper's baseline, a single-threaded Java program:
  every kernel on one core, one operator at a time, costed with the core's
  ``java`` kernel library (scalar code times an interpretation overhead, the
  one number fitted on the Nexus 5; see ``socs/snapdragon800.yaml``).
"""

from __future__ import annotations

from simulator.policy import POLICIES, Job, Placement, Plan, Policy

from ..split import serialize


@POLICIES.register("single-thread")
class SingleThread(Policy):
    """Everything on one core, one kernel at a time, with a scalar library.

    Args:
        processor: CPU cluster (default: the device's first).
        library: the kernel library costing it (``java``).
    """

    name = "single-thread"
    conformance = {"params": {"processor": "cpu.gold"}, "workload": {"model": "lenet5"}}

    def __init__(self, processor: str | None = None, library: str = "java"):
        self.processor = processor
        self.library = library

    def plan(self, job: Job) -> Plan:
        specs = self.context.processors(job.device)
        processor = self.processor or next((n for n in specs if n.startswith("cpu.")),
                                           next(iter(specs)))
        self.context.require_processor(processor, job.device)
        placement = Placement(processor, 1, library=self.library)
        trace = serialize(job.trace)
        return Plan([placement] * len(trace), trace=trace)
