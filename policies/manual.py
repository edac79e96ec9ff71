"""``manual``: placements written in the experiment, by kernel id or op kind."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from simulator.errors import ConfigError
from simulator.policy import POLICIES, Job, Placement, Plan, Policy


@POLICIES.register("manual")
class Manual(Policy):
    """Place kernels as told.

    A kernel goes to the processor named for its id in ``kernels``, else for its
    op kind in ``ops``, else to ``default``. Every placement uses all units of
    its processor unless ``cores`` names a count for it. With several jobs
    (tenants), ``shares`` gives each job a fraction of every unit it uses
    (processor sharing: the job's kernels run at that fraction of full speed,
    side by side with the other tenants').

    Args:
        default: processor for kernels not named otherwise.
        ops: op kind -> processor.
        kernels: kernel id -> processor.
        cores: processor -> units to use.
        shares: job name -> share in (0, 1] (1 when not named).
    """

    name = "manual"

    def __init__(self, default: str = "cpu.gold", ops: dict[str, str] | None = None,
                 kernels: dict[Annotated[int, Field(strict=False)], str] | None = None,
                 cores: dict[str, Annotated[int, Field(ge=1)]] | None = None,
                 shares: dict[str, Annotated[float, Field(gt=0, le=1)]] | None = None):
        self.default = default
        self.ops = dict(ops or {})
        self.kernels = {int(k): v for k, v in (kernels or {}).items()}
        self.cores = dict(cores or {})
        self.shares = dict(shares or {})

    def plan(self, job: Job) -> Plan:
        units = {}
        for name in {self.default, *self.ops.values(), *self.kernels.values(), *self.cores}:
            try:
                units[name] = self.cores.get(name, self.context.units(name, job.device))
            except KeyError as err:
                raise ConfigError(str(err.args[0])) from None
        table = job.trace.table
        share = self.shares.get(job.name, 1.0)
        placements = []
        for kid, op in zip(table["id"], table["op"]):
            proc = self.kernels.get(int(kid)) or self.ops.get(op) or self.default
            placements.append(Placement(proc, units[proc], share))
        return Plan(placements)
