"""``heft``: Heterogeneous Earliest Finish Time list scheduling.

Topcuoglu, Hariri and Wu, "Performance-effective and low-complexity task
scheduling for heterogeneous computing", IEEE TPDS 2002. Each processor
(a whole CPU cluster with all its cores, the GPU, the DSP) is one resource.

1. Upward rank: ``rank(i) = w(i) + max_j (c(i, j) + rank(j))`` over successors,
   with ``w`` the mean execution time over the processors that can run the
   kernel and ``c`` the mean transfer time over processor pairs.
2. In decreasing rank order, each kernel goes to the processor giving the
   earliest finish time (non-insertion variant), accounting for transfers.

The engine then runs the plan with real timing (DVFS, contention); the rank
becomes each kernel's priority.
"""

from __future__ import annotations

import math

from simulator.errors import ConfigError
from simulator.policy import POLICIES, Job, Placement, Plan, Policy


@POLICIES.register("heft")
class Heft(Policy):
    """HEFT over all processors of the job's device.

    Args:
        processors: processor names to use (all if None).
    """

    name = "heft"

    def __init__(self, processors: list[str] | None = None):
        self.processors = processors

    def plan(self, job: Job) -> Plan:
        specs = self.context.processors(job.device)
        names = list(self.processors or specs)
        for name in names:
            self.context.require_processor(name, job.device, path="processors")
        trace = job.trace
        n = len(trace)
        cost = [[self.context.duration(job, row, p) for p in names] for row in range(n)]
        for row, costs in enumerate(cost):
            if all(math.isinf(c) for c in costs):
                raise ConfigError(f"kernel {trace.table['name'][row]!r} cannot run on any of "
                                  f"{', '.join(names)}", path="processors")
        out_bytes = trace.table["bytes_out"].to_numpy(dtype=float)
        # mean transfer time per byte and fixed part over processor pairs
        pairs = [(a, b) for a in names for b in names if a != b]

        def comm(row: int) -> float:
            if not pairs:
                return 0.0
            return sum(self.context.transfer_time(job, a, b, out_bytes[row])
                       for a, b in pairs) / len(pairs)

        mean_w = [sum(c for c in costs if math.isfinite(c)) /
                  sum(1 for c in costs if math.isfinite(c)) for costs in cost]
        rank = [0.0] * n
        for row in reversed(range(n)):  # trace rows are in topological order
            succ = max((comm(row) + rank[s] for s in trace.succs[row]), default=0.0)
            rank[row] = mean_w[row] + succ
        order = sorted(range(n), key=lambda r: (-rank[r], r))
        available = dict.fromkeys(names, 0.0)
        finish = [0.0] * n
        chosen = [""] * n
        for row in order:
            best = None
            for k, proc in enumerate(names):
                if math.isinf(cost[row][k]):
                    continue
                ready = 0.0
                for pred in trace.preds[row]:
                    move = 0.0
                    if chosen[pred] != proc:
                        move = self.context.transfer_time(job, chosen[pred], proc,
                                                          out_bytes[pred])
                    ready = max(ready, finish[pred] + move)
                eft = max(ready, available[proc]) + cost[row][k]
                if best is None or eft < best[0]:
                    best = (eft, proc)
            finish[row], chosen[row] = best
            available[best[1]] = best[0]
        placements = [Placement(p, specs[p].units) for p in chosen]
        return Plan(placements, priorities=[-r for r in rank])
