"""A vectorised copy of the cost model, for fitting (matches the engine's ``single`` policy).

Generalised from the Pixel 4 study's fast model: any processor, core count,
precision and a fixed frequency (an OPP; default the top one). Besides the
roofline it follows the processor's ``gemm_half_channels`` (narrow
convolutions) and ``winograd_reduction`` (3x3 stride-1 convolutions), as
:mod:`simulator.hardware.cost` does for kernels costed with the processor's own
table (the only kind the ``single`` policy places without a framework).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from simulator.hardware.cost import Unsupported, lookup, memory_levels
from simulator.ops import OP_KINDS
from simulator.spec.soc import SocSpec
from simulator.trace import BYTES_PER_ELEMENT, Trace


# trace columns the cost model reads and this copy does not (see Problem.fast_model_gaps)
IGNORED_COLUMNS = ("fixed_s", "spill", "read_stride", "simd_waste")


@dataclass(frozen=True)
class Setting:
    """How one measurement ran: processor (``cpu.gold``, ``gpu``, ``dsp``), cores
    (threads on it), precision, and a fixed clock in Hz (``None``: its top OPP)."""

    processor: str
    cores: int = 1
    precision: str = "fp32"
    frequency: float | None = None

    @property
    def policy(self) -> dict:
        """The engine policy that runs a trace this way (one operator at a time)."""
        return {"name": "single", "processor": self.processor, "cores": self.cores}


class FastCase:
    """One trace on one :class:`Setting`, with the cost model vectorised.

    Everything that does not depend on fitted parameters (the bytes each memory
    level serves, which depend only on capacities) is computed once; latency
    then follows :mod:`simulator.hardware.cost` kernel by kernel: the ``single``
    policy runs one operator at a time, so latency is the sum of kernel times
    plus, on an accelerator with its own address space, uploading the input
    and downloading the output (see :mod:`simulator.engine.job_runner`).
    Capacities (caches, memories) must not be fitted: they are fixed here.
    """

    def __init__(self, soc: SocSpec, trace: Trace, setting: Setting):
        self.setting, self.trace = setting, trace
        proc = soc.processors()[setting.processor]
        table = trace.table
        ops = table["op"].tolist()
        # what the engine refuses, refused here too (a fit must not use a row it cannot run)
        if setting.precision not in proc.ops_per_cycle:
            raise Unsupported(f"{setting.processor} has no {setting.precision} datapath")
        refused = sorted(set(ops) & set(proc.unsupported_ops))
        if refused:
            raise Unsupported(f"{setting.processor} does not support op "
                              f"{', '.join(map(repr, refused))}")
        # what the engine costs and this copy leaves out: Problem.fast_model_gaps checks
        # one case of every (setting, signature) against the engine
        ignored = tuple(bool(c in table and table[c].fillna(0).astype(float).ne(0).any())
                        for c in IGNORED_COLUMNS)
        batch = int(table["batch"].max()) if "batch" in table and len(table) else 1
        padded = proc.batch_padding is not None and batch > proc.batch_padding.above
        self.signature = (ignored, padded)
        # efficiencies are looked up per (op kind, pass): training steps have backward kernels
        keys = list(zip(ops, table["pass"].tolist()))
        self.keys = sorted(set(keys))
        self.kinds = sorted(set(ops))
        self.kind_index = np.array([self.keys.index(k) for k in keys], dtype=int)
        self.ops = np.array(ops, dtype=object)
        self.precision = setting.precision
        self.flops = table["flops"].to_numpy(float)
        out_channels = (table["out_channels"].fillna(0).to_numpy(float)
                        if "out_channels" in table else np.zeros(len(table)))
        # rows the narrow-convolution factor applies to (see gemm_half_channels)
        self.narrow = (table["op"] == "conv").to_numpy() & (out_channels > 0)
        self.out_channels = np.where(self.narrow, out_channels, 1.0)
        kernel = table["kernel"].fillna(0).to_numpy(float)
        stride = table["stride"].fillna(0).to_numpy(float)
        # rows a Winograd library computes with less arithmetic (see winograd_reduction)
        self.winograd = (table["op"] == "conv").to_numpy() & (kernel == 3) & (stride == 1)
        bytes_in, bytes_out, weights = (table[c].to_numpy(float)
                                        for c in ("bytes_in", "bytes_out", "weight_bytes"))
        # rows the grouped-convolution factor applies to, with their input channels per
        # group (see group_half_channels)
        self.grouped = ((table["op"] == "group_conv").to_numpy() & (kernel > 0)
                        & (bytes_out > 0) & (self.flops > 0))
        element = BYTES_PER_ELEMENT[setting.precision]
        # bytes of the serial im2col copy (see im2col_bytes_per_cycle)
        copied = self.narrow & ((kernel > 1) | (stride > 1))
        self.im2col_bytes = np.where(copied, self.flops * element
                                     / (2.0 * np.where(copied, out_channels, 1.0)), 0.0)
        self.group_channels = np.where(
            self.grouped, self.flops * element
            / (2.0 * np.where(self.grouped, bytes_out * kernel * kernel, 1.0)), 1.0)
        windowed = np.array([OP_KINDS[op].window_reuse for op in ops], dtype=bool) & (kernel > 0)
        reuse = np.ones(len(table))
        reuse[windowed] = np.maximum(1.0, (kernel[windowed] / np.maximum(stride[windowed], 1))
                                     ** 2)
        activations = bytes_in + bytes_out
        footprint = activations + weights
        accesses = reuse * bytes_in + bytes_out + weights
        # single-threaded kernels (the processor's serial_ops) see one unit's hierarchy
        self.serial = np.array([op in proc.serial_ops for op in ops], dtype=bool)
        self.units = np.where(self.serial, 1, max(1, min(setting.cores, proc.units)))
        self.served = {}
        for units in sorted(set(self.units.tolist())):
            served = accesses.copy()
            self.served[units] = []
            for level in memory_levels(soc, proc, units):
                self.served[units].append(served)
                if math.isinf(level.capacity):
                    break
                law = proc.replacement
                beyond = weights + activations * _miss(activations, level.capacity, law)
                if not proc.window_reads_on_chip:
                    beyond = beyond + (accesses - footprint) * _miss(footprint, level.capacity,
                                                                     law)
                served = np.minimum(served, beyond)
        # host I/O bytes: inputs of the first kernels, outputs of the last ones
        self.io_bytes = (sum(bytes_in[r] for r, p in enumerate(trace.preds) if not p)
                         + sum(bytes_out[r] for r, s in enumerate(trace.succs) if not s))
        self.io_transfers = (sum(1 for p in trace.preds if not p)
                             + sum(1 for s in trace.succs if not s))

    def frequency(self, soc: SocSpec) -> float:
        """Hz the processor runs at."""
        proc = soc.processors()[self.setting.processor]
        return self.setting.frequency or proc.opps[-1].frequency

    def inputs(self, soc: SocSpec, memo: dict | None = None) -> tuple:
        """Everything :meth:`durations` reads from ``soc`` (hashable: equal inputs, equal
        durations, so a fit recomputes only the cases a parameter step touches).
        ``memo``: a dict shared by the cases of one ``soc`` (lookups done once)."""
        memo = {} if memo is None else memo
        name = self.setting.processor
        key = (name, self.precision)
        if key not in memo:
            if "processors" not in memo:
                memo["processors"] = soc.processors()
            proc = memo["processors"][name]
            memo[key] = (proc, {}, (proc.gemm_half_channels, proc.group_half_channels,
                                    proc.im2col_bytes_per_cycle, proc.winograd_reduction,
                                    proc.parallel(self.precision),
                                    proc.ops_per_cycle[self.precision]))
        proc, kinds, scalars = memo[key]
        for k in self.keys:
            if k not in kinds:
                op, pass_ = k
                kinds[k] = (lookup(proc.efficiency, self.precision, op, pass_),
                            lookup(proc.memory_efficiency, self.precision, op, pass_),
                            proc.overhead(op))
        levels = []
        for units in self.served:
            if (name, units) not in memo:
                memo[(name, units)] = tuple((level.bytes_per_cycle, level.bandwidth)
                                            for level in memory_levels(soc, proc, units))
            levels.append(memo[(name, units)])
        values = [kinds[k] for k in self.keys]
        return (tuple(v[0] for v in values), tuple(v[1] for v in values), *scalars,
                self.setting.frequency or proc.opps[-1].frequency, tuple(levels),
                tuple(v[2] for v in values))

    def durations(self, soc: SocSpec, memo: dict | None = None) -> np.ndarray:
        """Seconds of every kernel alone at the setting's clock (``memo``: see
        :meth:`inputs`)."""
        key = self.inputs(soc, memo)
        if key != getattr(self, "_key", None):
            self._durations, self._key = self._compute(*key), key
        return self._durations

    def _compute(self, efficiency, mem_eff, gemm_half, group_half, im2col, winograd, parallel,
                 ops_per_cycle, frequency, levels, overhead) -> np.ndarray:
        efficiency = np.array(efficiency)[self.kind_index]
        mem_eff = np.array(mem_eff)[self.kind_index]
        if gemm_half > 0:
            efficiency = np.where(self.narrow, efficiency * self.out_channels
                                  / (self.out_channels + gemm_half), efficiency)
        if group_half > 0:
            efficiency = np.where(self.grouped, efficiency * self.group_channels
                                  / (self.group_channels + group_half), efficiency)
        scale = 1.0 + (self.units - 1) * parallel
        work = self.flops
        if winograd > 1:
            # 3x3 stride-1 convolutions do flops / r of arithmetic; memory is unchanged
            work = np.where(self.winograd, self.flops / winograd, self.flops)
        compute = work / (ops_per_cycle * efficiency * scale)
        total = np.zeros_like(compute)
        for (units, served_levels), bandwidths in zip(self.served.items(), levels):
            mine = self.units == units
            cycles = compute[mine]
            fixed = np.zeros_like(cycles)
            for (per_cycle, bandwidth), served in zip(bandwidths, served_levels):
                if per_cycle is not None:
                    cycles = np.maximum(cycles, served[mine] / (per_cycle * mem_eff[mine]))
                else:
                    fixed = np.maximum(fixed, served[mine] / (bandwidth * mem_eff[mine]))
            if im2col > 0:
                # the serial im2col copy adds to the clock-scaled time (not split over units)
                cycles = cycles + self.im2col_bytes[mine] / im2col
            total[mine] = np.maximum(cycles / frequency, fixed)
        return total + np.array(overhead)[self.kind_index]

    def latency(self, soc: SocSpec, op: str | int | None = None) -> float:
        """End-to-end seconds of one inference; with ``op``, the seconds of one kernel
        (its row number) or of every kernel of one op kind (its name; kinds joined by
        "+" are summed), I/O excluded."""
        return self.total(self.durations(soc), soc, op)

    def total(self, durations: np.ndarray, soc: SocSpec, op: str | int | None = None,
              memo: dict | None = None) -> float:
        """:meth:`latency` from the kernels' ``durations`` (seconds)."""
        if op is not None:
            return float(durations[op] if isinstance(op, (int, np.integer))
                         else durations[np.isin(self.ops, op.split("+"))].sum())
        total = float(durations.sum())
        key = (self.setting.processor, self.precision)
        proc = memo[key][0] if memo and key in memo else soc.processors()[key[0]]
        offload = proc.offload
        if offload is not None:
            total += self.io_transfers * offload.switch + self.io_bytes / offload.bandwidth
        return total


def _miss(working_set: np.ndarray, capacity: float, replacement: str = "random") -> np.ndarray:
    """:func:`simulator.hardware.cost.miss_ratio`, element-wise."""
    if replacement == "lru":
        return np.where(working_set > capacity, 1.0, 0.0)
    return np.where(working_set > capacity, 1.0 - capacity / np.maximum(working_set, 1e-300),
                    0.0)


def engine_metrics(soc: SocSpec, trace: Trace, setting: Setting) -> dict[str, float]:
    """Metrics of one run of ``trace`` through the full engine, as :class:`FastCase`
    models it: the ``single`` policy, the setting's clock held (``userspace`` governor,
    or ``performance`` at the top OPP), thermal governor off."""
    from simulator.engine.simulation import simulate
    from simulator.spec.experiment import ExperimentSpec

    dvfs = {"governor": "performance"}
    if setting.frequency is not None:
        dvfs = {"domains": {setting.processor: {"governor": "userspace",
                                                "frequency": f"{setting.frequency!r} Hz"}},
                "governor": "performance"}
    spec = ExperimentSpec.model_validate({
        "name": "fast-model-check", "soc": soc.name, "workload": {"trace": "<memory>"},
        "policy": setting.policy, "dvfs": dvfs, "thermal": {"governor": False},
        "outputs": {"timeline": False}})
    return simulate(spec, traces={0: trace}, soc=soc).metrics


def engine_latency(soc: SocSpec, trace: Trace, setting: Setting) -> float:
    """Seconds of one run through the full engine (:func:`engine_metrics`): the fast
    model's check."""
    return float(engine_metrics(soc, trace, setting)["latency_s"])


def engine_energy(soc: SocSpec, trace: Trace, setting: Setting) -> float:
    """Joules of the whole device over one run (:func:`engine_metrics`)."""
    return float(engine_metrics(soc, trace, setting)["energy_per_iteration_j"])
