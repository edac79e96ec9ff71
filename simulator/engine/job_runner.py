"""Runs one job: iterations of a kernel DAG under a plan.

For every iteration, kernels are released when all their predecessors have
finished and any data they produced in another address space has arrived.
A producer's output crosses to another address space once per destination
space (not once per consumer), as a framework would copy a tensor once.

A job's input and output live in its device's CPU memory: a first kernel
placed on an accelerator with its own address space waits for its input to be
uploaded, and an iteration ends only when the outputs of last kernels placed
there are downloaded (what a GPU delegate or a FastRPC call does per inference).
"""

from __future__ import annotations

import simpy

from ..errors import ConfigError
from ..hardware.cost import Unsupported
from ..policy import Job, Plan
from .processor import Task
from .system import System


class JobRunner:
    """Executes ``job`` on ``system`` following ``plan``.

    Args:
        env: the SimPy environment.
        system: devices and links.
        job: the job.
        plan: placements and priorities, one per kernel row.

    Raises:
        ConfigError: a placement names an unknown processor, asks for more units
            than it has, or puts a kernel where it cannot run.
    """

    def __init__(self, env: simpy.Environment, system: System, job: Job, plan: Plan):
        self.env = env
        self.job = job
        trace = plan.trace if plan.trace is not None else job.trace
        n = len(trace)
        if len(plan.placements) != n or len(plan.priorities) != n:
            raise ConfigError(f"policy returned {len(plan.placements)} placements for a job "
                              f"of {n} kernels")
        table = trace.table
        columns = {c: table[c].tolist() for c in table.columns if c != "deps"}
        records = [dict(zip(columns, values)) for values in zip(*columns.values())]
        self.labels = [f"{job.name}/{kid}:{name}" for kid, name in
                       zip(table["id"], table["name"])]
        self.where: list[tuple[str, str]] = []
        self.procs = []
        self.costs = []
        self.units = []
        self.shares = []
        resolved: dict = {}
        for row, (placement, record) in enumerate(zip(plan.placements, records)):
            place = resolved.get(placement)
            if place is None:
                place = resolved[placement] = self._resolve(system, job, placement, row)
            device, local, proc = place
            try:
                cost = system.devices[device].cost_model.kernel_cost(local, placement.units,
                                                                     record)
            except Unsupported as err:
                raise ConfigError(f"kernel {self.labels[row]} ({record['op']}, "
                                  f"{record['precision']}) cannot run: {err}") from None
            self.where.append((device, local))
            self.procs.append(proc)
            self.costs.append(cost)
            self.units.append(placement.units)
            self.shares.append(placement.share)
        self.priorities = list(plan.priorities)
        self.bytes_out = table["bytes_out"].to_numpy(dtype=float)
        self.bytes_in = table["bytes_in"].to_numpy(dtype=float)
        home = (job.device, next(name for name in system.device(job.device).processors
                                 if name.startswith("cpu.")))
        self.upload = [system.route(home, self.where[row]) if not preds else []
                       for row, preds in enumerate(trace.preds)]
        self.download = [system.route(self.where[row], home) if not succs else []
                         for row, succs in enumerate(trace.succs)]
        self.preds_count = [len(p) for p in trace.preds]
        # successors grouped by the route their data takes
        self.fanout: list[list[tuple[list, list[int]]]] = []
        routes: dict[tuple, list] = {}
        for row, succs in enumerate(trace.succs):
            groups: dict[tuple, tuple[list, list[int]]] = {}
            for succ in succs:
                pair = (self.where[row], self.where[succ])
                route = routes.get(pair)
                if route is None:
                    route = routes[pair] = system.route(*pair)
                key = tuple(id(c) for c in route)
                groups.setdefault(key, (route, []))[1].append(succ)
            self.fanout.append(list(groups.values()))
        self.iteration_times: list[tuple[float, float]] = []
        self.done = env.event()

    def _resolve(self, system: System, job: Job, placement, row: int):
        """(device, local name, Processor) of a placement, checked."""
        try:
            device, local = system.resolve(placement.processor, job.device)
        except KeyError as err:
            raise ConfigError(f"kernel {self.labels[row]}: {err.args[0]}") from None
        proc = system.processor(device, local)
        if not 1 <= placement.units <= proc.spec.units:
            raise ConfigError(f"kernel {self.labels[row]}: {placement.units} units "
                              f"requested on {placement.processor}, which has "
                              f"{proc.spec.units}")
        if not 0 < placement.share <= 1:
            raise ConfigError(f"kernel {self.labels[row]}: share must be in (0, 1]")
        return device, local, proc

    def process(self):
        """SimPy process: release time, then the iterations back to back."""
        if self.job.start > 0:
            yield self.env.timeout(self.job.start)
        for iteration in range(self.job.iterations):
            start = self.env.now
            yield self._iteration(iteration)
            self.iteration_times.append((start, self.env.now))
        self.done.succeed()

    def _iteration(self, iteration: int) -> simpy.Event:
        finished = self.env.event()
        waiting = list(self.preds_count)
        left = [len(waiting)]

        def release(row: int) -> None:
            task = Task(self.labels[row], self.costs[row], self.units[row], self.shares[row],
                        self.priorities[row], on_done, meta=(self.job.name, iteration, row))
            self.procs[row].submit(task)

        def arrive(rows: list[int]) -> None:
            for succ in rows:
                waiting[succ] -= 1
                if waiting[succ] == 0:
                    release(succ)

        def retire() -> None:
            left[0] -= 1
            if left[0] == 0:
                finished.succeed()

        def on_done(task: Task) -> None:
            row = task.meta[2]
            for route, rows in self.fanout[row]:
                if route:
                    self._send(route, self.bytes_out[row], rows, arrive, task.label)
                else:
                    arrive(rows)
            if self.download[row]:
                self._send(self.download[row], self.bytes_out[row], [], lambda _: retire(),
                           task.label + " (output)")
            else:
                retire()

        for row, count in enumerate(waiting):
            if count == 0:
                if self.upload[row]:
                    self._send(self.upload[row], self.bytes_in[row], [row],
                               lambda rows: release(rows[0]), "input")
                else:
                    release(row)
        if not waiting:
            finished.succeed()
        return finished

    def _send(self, route, nbytes: float, rows: list[int], arrive, label: str) -> None:
        """Move ``nbytes`` hop by hop along ``route``, then release ``rows``."""
        def hop(i: int) -> None:
            if i == len(route):
                arrive(rows)
            else:
                route[i].send(nbytes, lambda: hop(i + 1), label)

        hop(0)
