"""A vectorised copy of the cost model for fitting (matches the engine to 1e-13)."""

from __future__ import annotations

import math

import numpy as np

from simulator.hardware.cost import lookup, memory_levels
from simulator.ops import OP_KINDS
from simulator.spec.soc import SocSpec
from simulator.trace import Trace
from validation.pixel4.data import Config


class FastCase:
    """One model on one configuration, with the cost model vectorised.

    Everything that does not depend on fitted parameters (the bytes each memory
    level serves, which depend only on capacities) is computed once; latency
    then follows :mod:`simulator.hardware.cost` kernel by kernel: the ``single``
    policy runs one operator at a time, so latency is the sum of kernel times
    plus, on an accelerator with its own address space, uploading the input
    and downloading the output (see :mod:`simulator.engine.job_runner`).
    """

    def __init__(self, soc: SocSpec, trace: Trace, config: Config):
        self.config = config
        proc = soc.processors()[config.processor]
        table = trace.table
        ops = table["op"].tolist()
        self.kinds = sorted(set(ops))
        self.kind_index = np.array([self.kinds.index(op) for op in ops])
        self.precision = config.precision
        self.flops = table["flops"].to_numpy(float)
        out_channels = (table["out_channels"].fillna(0).to_numpy(float)
                        if "out_channels" in table else np.zeros(len(table)))
        # rows the narrow-convolution factor applies to (see gemm_half_channels)
        self.narrow = (table["op"] == "conv").to_numpy() & (out_channels > 0)
        self.out_channels = np.where(self.narrow, out_channels, 1.0)
        bytes_in, bytes_out, weights = (table[c].to_numpy(float)
                                        for c in ("bytes_in", "bytes_out", "weight_bytes"))
        kernel = table["kernel"].fillna(0).to_numpy(float)
        stride = table["stride"].fillna(0).to_numpy(float)
        windowed = np.array([OP_KINDS[op].window_reuse for op in ops]) & (kernel > 0)
        reuse = np.ones(len(table))
        reuse[windowed] = np.maximum(1.0, (kernel[windowed] / np.maximum(stride[windowed], 1))
                                     ** 2)
        activations = bytes_in + bytes_out
        footprint = activations + weights
        accesses = reuse * bytes_in + bytes_out + weights
        # single-threaded kernels (the processor's serial_ops) see one unit's hierarchy
        self.serial = np.array([op in proc.serial_ops for op in ops])
        self.units = np.where(self.serial, 1, max(1, min(config.cores, proc.units)))
        self.served = {}
        for units in sorted(set(self.units.tolist())):
            served = accesses.copy()
            self.served[units] = []
            for level in memory_levels(soc, proc, units):
                self.served[units].append(served)
                if math.isinf(level.capacity):
                    break
                beyond = weights + activations * _miss(activations, level.capacity)
                if not proc.window_reads_on_chip:
                    beyond = beyond + (accesses - footprint) * _miss(footprint, level.capacity)
                served = np.minimum(served, beyond)
        # host I/O bytes: inputs of the first kernels, outputs of the last ones
        self.io_bytes = (sum(bytes_in[r] for r, p in enumerate(trace.preds) if not p)
                         + sum(bytes_out[r] for r, s in enumerate(trace.succs) if not s))
        self.io_transfers = (sum(1 for p in trace.preds if not p)
                             + sum(1 for s in trace.succs if not s))

    def durations(self, soc: SocSpec) -> np.ndarray:
        """Seconds of every kernel alone at the top OPP."""
        proc = soc.processors()[self.config.processor]
        efficiency = np.array([lookup(proc.efficiency, self.precision, k, "fwd")
                               for k in self.kinds])[self.kind_index]
        mem_eff = np.array([lookup(proc.memory_efficiency, self.precision, k, "fwd")
                            for k in self.kinds])[self.kind_index]
        if proc.gemm_half_channels > 0:
            efficiency = np.where(self.narrow, efficiency * self.out_channels
                                  / (self.out_channels + proc.gemm_half_channels), efficiency)
        scale = 1.0 + (self.units - 1) * proc.parallel(self.precision)
        compute = self.flops / (proc.ops_per_cycle[self.precision] * efficiency * scale)
        total = np.zeros_like(compute)
        for units, served_levels in self.served.items():
            mine = self.units == units
            cycles = compute[mine]
            fixed = np.zeros_like(cycles)
            for level, served in zip(memory_levels(soc, proc, units), served_levels):
                if level.bytes_per_cycle is not None:
                    cycles = np.maximum(cycles, served[mine] / (level.bytes_per_cycle
                                                                 * mem_eff[mine]))
                else:
                    fixed = np.maximum(fixed, served[mine] / (level.bandwidth * mem_eff[mine]))
            total[mine] = np.maximum(cycles / proc.opps[-1].frequency, fixed)
        overhead = np.array([proc.overhead(k) for k in self.kinds])[self.kind_index]
        return total + overhead

    def latency(self, soc: SocSpec) -> float:
        """End-to-end seconds of one inference."""
        total = float(self.durations(soc).sum())
        offload = soc.processors()[self.config.processor].offload
        if offload is not None:
            total += self.io_transfers * offload.switch + self.io_bytes / offload.bandwidth
        return total


def _miss(working_set: np.ndarray, capacity: float) -> np.ndarray:
    return np.where(working_set > capacity, 1.0 - capacity / np.maximum(working_set, 1e-300),
                    0.0)


