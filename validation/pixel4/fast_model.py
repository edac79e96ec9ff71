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
        self.capacities = []
        self.served = []
        served = accesses
        for level in memory_levels(soc, proc, config.cores):
            self.capacities.append(level.capacity)
            self.served.append(served)
            if math.isinf(level.capacity):
                break
            beyond = (weights + activations * _miss(activations, level.capacity)
                      + (accesses - footprint) * _miss(footprint, level.capacity))
            served = np.minimum(served, beyond)
        # host I/O bytes: inputs of the first kernels, outputs of the last ones
        self.io_bytes = (sum(bytes_in[r] for r, p in enumerate(trace.preds) if not p)
                         + sum(bytes_out[r] for r, s in enumerate(trace.succs) if not s))
        self.io_transfers = (sum(1 for p in trace.preds if not p)
                             + sum(1 for s in trace.succs if not s))

    def durations(self, soc: SocSpec) -> np.ndarray:
        """Seconds of every kernel alone at the top OPP."""
        proc = soc.processors()[self.config.processor]
        units = max(1, min(self.config.cores, proc.units))
        efficiency = np.array([lookup(proc.efficiency, self.precision, k, "fwd")
                               for k in self.kinds])[self.kind_index]
        mem_eff = np.array([lookup(proc.memory_efficiency, self.precision, k, "fwd")
                            for k in self.kinds])[self.kind_index]
        scale = 1.0 + (units - 1) * proc.parallel_efficiency
        cycles = self.flops / (proc.ops_per_cycle[self.precision] * efficiency * scale)
        fixed = np.zeros_like(cycles)
        levels = memory_levels(soc, proc, units)
        for level, served in zip(levels, self.served):
            if level.bytes_per_cycle is not None:
                cycles = np.maximum(cycles, served / (level.bytes_per_cycle * mem_eff))
            else:
                fixed = np.maximum(fixed, served / (level.bandwidth * mem_eff))
        return np.maximum(cycles / proc.opps[-1].frequency, fixed) + proc.dispatch_overhead

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


