"""Output-level parallelism (OLP) across processors, and kernel-time estimates.

OLP gives every output pixel (a fully connected layer: every output neuron) to
one thread, with no reduction; the threads of a layer may run on several CPU
clusters and the GPU at once. A kernel split this way becomes one part per
processor, each computing a fraction of the outputs: a spatial part reads its
share of the input rows and all the weights, a neuron part reads the whole
input and its share of the weights. Fractions follow each processor's speed
on the whole kernel so that the parts finish together.
"""

from __future__ import annotations

from collections.abc import Callable

from simulator.hardware.cost import Unsupported
from simulator.policy import Job, Placement, PolicyContext

INF = float("inf")


def part_record(record: dict, fraction: float) -> dict:
    """The part of ``record`` that computes ``fraction`` of its outputs."""
    part = dict(record)
    part["flops"] = record["flops"] * fraction
    part["bytes_out"] = record["bytes_out"] * fraction
    spatial = int(record.get("out_h") or 1) * int(record.get("out_w") or 1) > 1
    if spatial:
        part["bytes_in"] = record["bytes_in"] * fraction
    else:
        part["weight_bytes"] = record["weight_bytes"] * fraction
    return part


class Estimator:
    """Seconds a kernel takes on a placement, alone, at the top OPP (plus, on a
    processor with its own address space, moving its input there and its
    output back).

    Args:
        context: the policy context.
        job: the job (its device's processors are used).
    """

    def __init__(self, context: PolicyContext, job: Job):
        self.context = context
        self.job = job
        self.cost_model = context.cost_model(job.device)
        self.specs = context.processors(job.device)
        self.home = next((n for n in self.specs if n.startswith("cpu.")), next(iter(self.specs)))

    def time(self, record: dict, placement: Placement) -> float:
        """Estimated seconds (``inf`` if the processor cannot run the kernel)."""
        spec = self.specs[placement.processor]
        try:
            cost = self.cost_model.kernel_cost(placement.processor, placement.units,
                                                      record, placement.library,
                                                      placement.memory_share)
        except Unsupported:
            return INF
        seconds = cost.duration(spec.opps[-1].frequency)
        if spec.offload is not None:
            moved = record["bytes_in"] + record["bytes_out"]
            seconds += self.context.transfer_time(self.job, self.home, placement.processor,
                                                  moved)
        return seconds

    def split(self, record: dict, placements: list[Placement]
              ) -> tuple[list[tuple[Placement, float]], float]:
        """Best OLP split of ``record`` over ``placements``.

        Returns:
            ``[(placement, fraction), ...]`` (processors that cannot run it left
            out) and the estimated time of the slowest part.
        """
        whole = [(p, self.time(record, p)) for p in placements]
        usable = [(p, t) for p, t in whole if t < INF]
        if not usable:
            return [], INF
        speed = sum(1.0 / t for _, t in usable)
        parts = [(p, (1.0 / t) / speed) for p, t in usable]
        if len(parts) == 1:
            return [(parts[0][0], 1.0)], usable[0][1]
        seconds = max(self.time(part_record(record, f), p) for p, f in parts)
        return parts, seconds

    def best(self, record: dict, candidates: list[list[Placement]],
             costed: Callable[[list[Placement]], dict] | None = None
             ) -> tuple[list[tuple[Placement, float]], float, dict]:
        """The fastest of several candidate processor sets (see :meth:`split`).

        Args:
            record: the kernel.
            candidates: the processor sets.
            costed: the kernel as costed on a set, when that depends on the set (the
                Cappuccino policy's idle vector lanes); default ``record`` on every set.

        Returns:
            (the parts, the seconds of the slowest, the kernel as costed on the fastest
            set: ``record`` when none can run it).
        """
        best: tuple[list, float, dict] = ([], INF, record)
        for placements in candidates:
            rec = record if costed is None else costed(placements)
            parts, seconds = self.split(rec, placements)
            if seconds < best[1]:
                best = (parts, seconds, rec)
        return best
