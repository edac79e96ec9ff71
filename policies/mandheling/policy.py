"""``mandheling``: integer training with the integer operators on the Hexagon DSP.

The plan for one training step, technique by technique (each switchable, for
the paper's ablation):

1. the integer trace (``algorithm``, NITI by default; Mandheling supports the
   algorithms whose YAML says ``mandheling_supported``);
2. profiling: each operator's latency on the CPU thread pool (``cpu``) and on
   the DSP (all HVX contexts), and with ``batch_splitting`` the best
   micro-batch split of the DSP-abnormal ones (:mod:`.batch_splitting`);
3. placement: with ``co_scheduling`` the dynamic programme with the switch
   cost (:mod:`.co_scheduling`), else every DSP-capable operator on the DSP;
   every rescaling site (operator, ReduceMax, Shift) is one unit priced on both
   sides (:mod:`.units`), so the placement optimised is the one emitted
   (:attr:`Mandheling.schedule`); the DSP-abnormal operators placed on the DSP
   are then split;
4. with ``adaptive_rescaling`` a static-scale alternative for every rescaling
   site, chosen per batch by the f/2 rule (:mod:`.rescaling`), placed with its
   site; on a DSP library that re-runs an operator whose range it does not know
   (``range_retry``), a site on the DSP rescales by running its operator again;
5. DSP subgraphs and their preparation, every batch or, with
   ``subgraph_reuse``, once while they fit the DSP memory (:mod:`.subgraph_reuse`);
6. the order: one operator at a time, or with ``parallel`` CPU and DSP
   subgraphs overlapping where the data allow (:mod:`.parallel`).

Weights stay where they are updated between batches: a step ends with a
zero-byte barrier on the DSP after the DSP's last kernels.
"""

from __future__ import annotations

from typing import Annotated

import numpy as np
from pydantic import Field

from simulator.errors import ConfigError
from simulator.params import NonNegativeInt
from simulator.policy import POLICIES, Job, Placement, Plan, Policy

from .batch_splitting import best_split, micro_batch
from .co_scheduling import CPU, DSP, co_schedule, dsp_first
from .cpu import CpuConfig, CpuFreq, pin_frequency, pool_duration, thread_pool
from .parallel import per_processor_order, serial_order
from .rescaling import (
    RescaleGroup,
    ScaleProcess,
    add_static_alternatives,
    find_groups,
    rescale_schedule,
    retry_rows,
    static_parts,
)
from .rows import Rewrite, assemble
from .subgraph_reuse import (
    add_calls,
    add_preparation,
    find_subgraphs,
    prepared_in,
    residency,
)
from .units import Schedule, Units, build_units
from .weights import weight_copies
from .workload import integer_trace

# Self-adaptive rescaling: measurement window and period (batches), E: the paper
# gives the rule (rescale at f/2 after measuring f), not these lengths.
WINDOW, PERIOD = 50, 500


@POLICIES.register("mandheling")
class Mandheling(Policy):
    """Mandheling's CPU-DSP co-execution of integer training.

    Args:
        co_scheduling: place operators by the dynamic programme (else all that
            the DSP supports on the DSP).
        adaptive_rescaling: rescale each layer at the f/2 rule (else every batch).
        batch_splitting: run DSP-abnormal operators as micro-batches.
        subgraph_reuse: keep prepared DSP subgraphs (else prepare every batch).
        parallel: overlap CPU and DSP subgraphs (else one operator at a time).
        cpu: the CPU thread pool (``big2`` by default, as in the paper).
        cpu_freq: ``max``, ``min`` or ``governor``.
        algorithm: the integer training algorithm applied to an FP32 workload.
        library: kernel library of the CPU part and of graph preparation
            (``mnn``; ``tflite`` for TFLite's preparation cost).
        start_batch: index in the training run of the job's first batch (the
            scale factors change often early on; per-batch experiments sample
            the later phase).
        split_threshold: how much worse per sample an operator must be at the
            full batch to count as abnormal.
        scale_seed: seed of the layers' scale-factor processes (None: the run's
            random stream). Runs that should see the same training (the steps of
            an ablation) share it.
    """

    name = "mandheling"
    conformance = {"params": {}, "workload": {"model": "lenet5", "mode": "training",
                                              "batch": 8, "iterations": 3}}
    metrics_read_records = False  # its metrics are the plan's shape (self.summary)

    def __init__(self, co_scheduling: bool = True, adaptive_rescaling: bool = True,
                 batch_splitting: bool = True, subgraph_reuse: bool = True,
                 parallel: bool = True, cpu: CpuConfig = "big2",
                 cpu_freq: CpuFreq = "governor",
                 algorithm: str = "niti", library: str = "mnn",
                 start_batch: NonNegativeInt = 500,
                 split_threshold: Annotated[float, Field(ge=1)] = 1.5,
                 scale_seed: NonNegativeInt | None = None):
        self.co_scheduling = co_scheduling
        self.adaptive_rescaling = adaptive_rescaling
        self.batch_splitting = batch_splitting
        self.subgraph_reuse = subgraph_reuse
        self.parallel = parallel
        self.cpu = cpu
        self.cpu_freq = cpu_freq
        self.algorithm = algorithm
        self.library = library
        self.start_batch = start_batch
        self.split_threshold = split_threshold
        self.scale_seed = scale_seed
        self.summary: dict[str, float] = {}
        self.schedule: Schedule | None = None  # the last plan's placement and its cost

    # -- the plan -----------------------------------------------------------
    def plan(self, job: Job) -> Plan:
        specs = self.context.processors(job.device)
        if DSP not in specs:
            raise ConfigError("mandheling needs a SoC with a 'dsp'")
        dsp = specs[DSP]
        pin_frequency(self.context, job.device, self.cpu_freq)
        pool = thread_pool(specs, self.cpu, self.library)
        rewrite = Rewrite(integer_trace(job, self.algorithm, require_dsp_support=True))
        sites = find_groups(rewrite)
        groups = sites if self.adaptive_rescaling else []
        library = dsp.libraries.get(self.library)
        # on a library that re-runs an operator whose range it does not know, a
        # rescaling site's Shift on the DSP is that re-run (rescaling.retry_form)
        retry = retry_rows(rewrite, sites) if library is not None and library.range_retry \
            else {}

        layers, schedule, long_run = self._rescale_schedule(job, groups)
        # a site rescales in a share of the batches (over a whole measurement period,
        # not only this job's): the placement weighs its cost so
        share = {g.shift[0]: float(long_run[layers.index(g.layer)]) if groups else 1.0
                 for g in sites}
        target, splits = self._place(job, rewrite, pool, dsp.units, retry, sites, share)
        rewrite.records = [retry[r["id"]] if r["id"] in retry and target[r["id"]] == DSP
                           else r for r in rewrite.records]
        part_ids = self._split(rewrite, splits, sites, target)
        origin = {p: kid for kid, ids in part_ids.items() for p in ids}
        alternatives: set[int] = set()
        if groups:
            add_static_alternatives(rewrite, groups, target)
            alternatives = {i for group in groups for i in group.static}
        subgraphs = find_subgraphs(rewrite, target, alternatives, origin=origin)
        setup = library.graph_setup if library is not None and library.graph_setup else 0.0
        per_graph = (library.subgraph_setup or 0.0) if library is not None else 0.0
        add_preparation(rewrite, subgraphs, target, setup, per_subgraph=per_graph)
        node = library.dispatch_overhead if library is not None else None
        if node is not None:  # a subgraph is one FastRPC call; its nodes pay a step each
            add_calls(rewrite, subgraphs, target, max(0.0, dsp.dispatch_overhead - node))
        # after the subgraphs: a weight copy is a buffer transfer, not a graph operator
        weight_copies(rewrite, target)
        if self.parallel:
            per_processor_order(rewrite, target)
        else:
            serial_order(rewrite)
        self._barrier(rewrite, target)

        pools = {CPU: pool, DSP: [(Placement(DSP, dsp.units, library=self.library), 1.0)]}
        trace, placements, parts_of = assemble(rewrite, target, pools, "mandheling")
        rows_of = {kid: [trace.index_of[p] for p in parts] for kid, parts in parts_of.items()}
        prepared = residency([s.memory for s in subgraphs], dsp.memory_budget
                             if self.subgraph_reuse else 0.0)
        skip = _Skips(groups, subgraphs, prepared, rows_of, layers, schedule)
        self.summary = {
            "dsp_kernels": float(sum(p.processor == DSP for p in placements)),
            "cpu_kernels": float(sum(p.processor != DSP for p in placements)),
            "dsp_subgraphs": float(len(subgraphs)),
            "split_operators": float(len(splits)),
            "graph_prepare_s": float(sum(setup * s.operators + per_graph for s in subgraphs)),
            "rescale_fraction": skip.rescale_fraction,
        }
        return Plan(placements, trace=trace, skip=skip)

    def _rescale_schedule(self, job: Job, groups: list[RescaleGroup]
                          ) -> tuple[list[str], np.ndarray, np.ndarray]:
        """The weighted layers of the rescale groups, whether each rescales in
        each batch of the job (a seeded scale process per layer, the f/2 rule), and
        the share of batches each rescales in over a whole period from the job's
        first batch."""
        layers = sorted({g.layer for g in groups})
        horizon = max(job.iterations, PERIOD)
        batches = self.start_batch + horizon
        rng = self.context.rng if self.scale_seed is None else np.random.default_rng(
            self.scale_seed)
        process = ScaleProcess()
        schedule = np.zeros((len(layers), horizon), dtype=bool)
        for index in range(len(layers)):
            changed = process.changes(rng, batches)
            phase = int(rng.integers(1, PERIOD))
            schedule[index] = rescale_schedule(changed, WINDOW, PERIOD,
                                               phase)[self.start_batch:]
        return layers, schedule[:, :job.iterations], schedule[:, :PERIOD].mean(axis=1)

    def _place(self, job: Job, rewrite: Rewrite, pool, dsp_units: int,
               retry: dict[int, dict], sites: list[RescaleGroup], share: dict[int, float]
               ) -> tuple[dict[int, str], dict[int, int]]:
        """Profile every kernel and place the units; return each kernel's target
        and the splits of DSP kernels.

        Every rescaling site is one unit (:mod:`.units`) priced on both sides:
        on the CPU its operator, ReduceMax and Shift, on the DSP the same with
        the Shift as the DSP runs it (with ``retry``, Shift id -> its re-run
        form on a ``range_retry`` library: the operator again), each in the
        ``share`` of batches the layer rescales and its static version in the
        others. The placement the DP returns is the one emitted
        (:attr:`schedule` records both and the cost optimised)."""
        ctx = self.context
        records = rewrite.records
        cpu_cost = [pool_duration(ctx, job, r, pool) for r in records]

        def latency(row, _ctx=ctx):
            return _ctx.duration(job, row, DSP, dsp_units, self.library)

        dsp_cost, parts = [], []
        for record in records:
            on_dsp = retry.get(record["id"], record)
            if self.batch_splitting:
                n, seconds = best_split(on_dsp, latency, self.split_threshold)
            else:
                n, seconds = 1, latency(on_dsp)
            parts.append(n)
            dsp_cost.append(seconds)
        index = {r["id"]: i for i, r in enumerate(records)}
        triples, static_cpu, static_dsp, shares = [], [], [], []
        for g in sites:
            op, rmax, shift = index[g.compute[0]], index[g.reduce_max[0]], index[g.shift[0]]
            triples.append((op, rmax, shift))
            shares.append(share[g.shift[0]])
            (on_cpu,) = static_parts([records[op]], g.shift_flops, g.int8_bytes)
            static_cpu.append(pool_duration(ctx, job, on_cpu, pool))
            if g.shift[0] in retry:  # the re-run is the static version
                static_dsp.append(dsp_cost[shift])
            else:  # split like the operator
                n = parts[op]
                pieces = [micro_batch(records[op], n) for _ in range(n)] if n > 1 \
                    else [records[op]]
                static_dsp.append(sum(latency(p) for p in static_parts(
                    pieces, g.shift_flops, g.int8_bytes)))
        by_id = rewrite.by_id()
        name = pool[0][0].processor
        # what crosses when operator i+1 runs on the other side: the tensors it
        # reads (a Shift reads the INT32 accumulators, not only the max)
        switch = [ctx.transfer_time(job, name, DSP, sum(by_id[d]["bytes_out"]
                                                        for d in r["deps"]))
                  for r in records[1:]]
        units = build_units(len(records), triples, cpu_cost, dsp_cost, static_cpu,
                            static_dsp, shares, switch)
        self.schedule = self._co_schedule_with_copies(job, name, records, units)
        where = units.expand(self.schedule.placement)
        for record, w in zip(records, where):
            if w == CPU and np.isinf(cpu_cost[index[record["id"]]]):
                raise ConfigError(f"kernel {record['name']!r} runs on neither the "
                                  "CPU nor the DSP")
        target = {r["id"]: w for r, w in zip(records, where)}
        splits = {r["id"]: n for r, w, n in zip(records, where, parts) if w == DSP and n > 1}
        return target, splits

    def _co_schedule_with_copies(self, job: Job, cpu_name: str, records: list[dict],
                                 units: Units) -> Schedule:
        """The placement of the units: with ``co_scheduling`` the dynamic
        programme, else every unit the DSP can run on the DSP.

        Each weight update's cost on a side includes the copy of the updated
        weights to the other side when a reader of that layer's weights runs
        there (:mod:`.weights`); the DP is iterated until the placement no
        longer changes (a few rounds), and the cheapest placement met, priced
        with the copies it needs itself, is kept."""
        ctx = self.context
        updates = [u for u, span in enumerate(units.spans)
                   if records[span[0]]["pass"] == "update" and records[span[0]].get("layer")]
        copy = {u: ctx.transfer_time(job, cpu_name, DSP, records[units.spans[u][0]]["bytes_out"])
                for u in updates}

        def priced(placement: list[str]) -> tuple[list[float], list[float]]:
            readers: dict[str, set[str]] = {}
            for r, w in zip(records, units.expand(placement)):
                if r.get("layer") and r["pass"] != "update" and r["weight_bytes"] > 0:
                    readers.setdefault(str(r["layer"]), set()).add(w)
            cpu, dsp = list(units.cpu), list(units.dsp)
            for u in updates:
                read = readers.get(str(records[units.spans[u][0]]["layer"]), set())
                cpu[u] += copy[u] if DSP in read else 0.0
                dsp[u] += copy[u] if CPU in read else 0.0
            return cpu, dsp

        if not self.co_scheduling:
            where = dsp_first(units.dsp)
            cpu, dsp = priced(where)
            return Schedule(units, where, cpu, dsp, units.latency(where, cpu, dsp))
        where = co_schedule(units.cpu, units.dsp, units.switch)
        best: Schedule | None = None
        for _ in range(5):
            cpu, dsp = priced(where)
            seconds = units.latency(where, cpu, dsp)
            if best is None or seconds < best.seconds:
                best = Schedule(units, where, cpu, dsp, seconds)
            again = co_schedule(cpu, dsp, units.switch)
            if again == where:
                break
            where = again
        return best

    @staticmethod
    def _split(rewrite: Rewrite, splits: dict[int, int], groups: list[RescaleGroup],
               target: dict[int, str]) -> dict[int, list[int]]:
        """Replace each split kernel by its micro-batch chain. The last part keeps
        the kernel's id; its dependants also wait for the other parts, each of which
        holds a share of the output (a consumer on the CPU receives all of them),
        except a weight gradient's, which every part writes whole."""
        part_ids: dict[int, list[int]] = {}
        if not splits:
            return part_ids
        records = []
        for record in rewrite.records:
            count = splits.get(record["id"])
            if count is None:
                records.append(record)
                continue
            previous = None
            ids = []
            for index in range(count):
                part = micro_batch(record, count)
                part["id"] = record["id"] if index == count - 1 else rewrite.new_id()
                part["name"] = f"{record['name']}.mb{index}"
                part["deps"] = record["deps"] if previous is None else (previous,)
                records.append(part)
                ids.append(part["id"])
                target[part["id"]] = DSP
                previous = part["id"]
            part_ids[record["id"]] = ids
        rewrite.records = records
        by_id = rewrite.by_id()
        shares = {kid: tuple(ids[:-1]) for kid, ids in part_ids.items()
                  if by_id[kid]["pass"] != "bwd_weight"}
        for record in records:
            extra = tuple(p for dep in record["deps"] for p in shares.get(dep, ()))
            if extra:
                record["deps"] = (*record["deps"], *extra)
        for group in groups:
            group.compute = [p for kid in group.compute for p in part_ids.get(kid, [kid])]
            group.reduce_max = [p for kid in group.reduce_max for p in part_ids.get(kid, [kid])]
            group.shift = [p for kid in group.shift for p in part_ids.get(kid, [kid])]
        return part_ids

    @staticmethod
    def _barrier(rewrite: Rewrite, target: dict[int, str]) -> None:
        """A zero-byte kernel after the DSP's last kernels: their outputs (updated
        weights) stay in DSP memory instead of being copied home each batch."""
        successors = rewrite.successors()
        sinks = tuple(r["id"] for r in rewrite.records
                      if not successors[r["id"]] and target[r["id"]] == DSP)
        if not sinks:
            return
        kid = rewrite.new_id()
        rewrite.records.append({"id": kid, "name": "dsp.barrier", "op": "copy", "pass": "other",
                                "precision": "int8", "flops": 0.0, "bytes_in": 0.0,
                                "bytes_out": 0.0, "weight_bytes": 0.0, "deps": sinks})
        target[kid] = DSP

    def metrics(self, result, iterations) -> dict[str, float]:
        """The plan's shape: kernels per processor, subgraphs, splits, preparation
        time per full preparation (s), share of layer-batches that rescale."""
        return {f"mandheling.{k}": v for k, v in self.summary.items()}


class _Skips:
    """The plan's conditional kernels per iteration: preparation of subgraphs still
    prepared, and per rescale group the version (dynamic or static) not used.

    Attributes:
        static_rows, dynamic_rows: per rescale group, the plan rows of its static and of
            its dynamic version.
        group_layer: per rescale group, the index of its layer in the schedule.
        schedule: (layers x iterations) booleans: rescale in that batch.
        rescale_fraction: mean of ``schedule`` (1 without layers).
    """

    def __init__(self, groups: list[RescaleGroup], subgraphs, prepared: list[set[int]],
                 rows_of: dict[int, list[int]], layers: list[str], schedule: np.ndarray):
        def rows(ids) -> frozenset[int]:
            return frozenset(r for kid in ids for r in rows_of[kid])

        self._prepared = prepared
        self._prepare_rows = [rows([s.prepare]) for s in subgraphs]
        self.static_rows = [rows(g.static) for g in groups]
        self.dynamic_rows = [rows([*g.compute, *g.reduce_max, *g.shift]) for g in groups]
        self.group_layer = [layers.index(g.layer) for g in groups]
        self.schedule = schedule
        self.rescale_fraction = float(schedule.mean()) if len(layers) else 1.0
        self._cache: dict[tuple, frozenset[int]] = {}

    def __call__(self, iteration: int) -> frozenset[int]:
        decisions = tuple(bool(x) for x in self.schedule[:, iteration]) if len(
            self.schedule) else ()
        prepared = frozenset(prepared_in(self._prepared, iteration))
        key = (prepared, decisions)
        out = self._cache.get(key)
        if out is None:
            skipped: set[int] = set()
            for index, prepare in enumerate(self._prepare_rows):
                if index not in prepared:  # still prepared from an earlier batch
                    skipped |= prepare
            for group, layer in enumerate(self.group_layer):
                rescale = decisions[layer]
                skipped |= self.static_rows[group] if rescale else self.dynamic_rows[group]
            out = self._cache[key] = frozenset(skipped)
        return out
