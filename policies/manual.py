"""``manual``: placements written in the experiment, by kernel id or op kind."""

from __future__ import annotations

from simulator.errors import ConfigError
from simulator.policy import POLICIES, Job, Placement, Plan, Policy


@POLICIES.register("manual")
class Manual(Policy):
    """Place kernels as told.

    A kernel goes to the processor named for its id in ``kernels``, else for its
    op kind in ``ops``, else to ``default``. Every placement uses all units of
    its processor unless ``cores`` names a count for it.

    Args:
        default: processor for kernels not named otherwise.
        ops: op kind -> processor.
        kernels: kernel id -> processor.
        cores: processor -> units to use.
    """

    name = "manual"

    def __init__(self, default: str = "cpu.gold", ops: dict[str, str] | None = None,
                 kernels: dict[int, str] | None = None, cores: dict[str, int] | None = None):
        self.default = default
        self.ops = dict(ops or {})
        self.kernels = {int(k): v for k, v in (kernels or {}).items()}
        self.cores = dict(cores or {})

    def plan(self, job: Job) -> Plan:
        specs = self.context.processors(job.device)
        for name in {self.default, *self.ops.values(), *self.kernels.values(), *self.cores}:
            if name not in specs:
                raise ConfigError(f"unknown processor {name!r}; this SoC has "
                                  f"{', '.join(specs)}")
        table = job.trace.table
        placements = []
        for kid, op in zip(table["id"], table["op"]):
            proc = self.kernels.get(int(kid)) or self.ops.get(op) or self.default
            placements.append(Placement(proc, self.cores.get(proc, specs[proc].units)))
        return Plan(placements)
