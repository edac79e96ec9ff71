"""Kernel cost model: how long a kernel takes on a processor, and what it moves.

A hierarchical roofline. A kernel on ``k`` units of a processor needs

* compute: ``flops / (ops_per_cycle[precision] * efficiency[op] * scale(k))``
  cycles, where ``scale(k) = 1 + (k - 1) * parallel_efficiency``;
* memory: at every level of its memory hierarchy (private caches, shared
  caches, DRAM), the bytes that missed all nearer levels divided by that
  level's bandwidth. Which level serves the bytes follows from the working set
  against each level's capacity (below), which is what makes a DSP fall off a
  cliff when a batch stops fitting its L2, and what operator linking saves.

The kernel takes ``max(compute, slowest memory level) + dispatch overhead``.
Levels clocked by the processor (``bytes_per_cycle``) scale with DVFS, the
others do not, so the cost is kept as ``cycles`` (divided by the current
frequency at run time), ``fixed`` seconds and ``overhead`` seconds:

    duration(f) = max(cycles / f, fixed) + overhead

Cache traffic. With footprint ``W = bytes_in + bytes_out + weight_bytes`` and
access volume ``R = reuse * bytes_in + bytes_out + weight_bytes`` (``reuse`` =
kernel taps per output, ``(kernel / stride)^2``, for windowed ops), the bytes
that must come from beyond level ``j`` of capacity ``C_j`` are

    M_j = min(M_{j-1}, weight_bytes + A * miss(A, C_j) + (R - W) * miss(W, C_j))

with ``M_0 = R``, ``A = bytes_in + bytes_out`` (activations just written by the
producer stay resident when they fit) and ``miss(x, C) = max(0, 1 - C/x)``,
the capacity-miss ratio of a random-replacement cache. Level ``j`` serves
``M_{j-1}`` bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..ops import OP_KINDS
from ..spec.soc import ProcessorSpec, SocSpec


@dataclass(frozen=True)
class KernelCost:
    """Cost of one kernel on one placement.

    Attributes:
        cycles: processor-clock cycles of the clock-scaled part (compute or
            clock-scaled cache traffic, whichever is larger).
        fixed: seconds of the part that does not scale with the processor
            clock (shared caches, DRAM).
        overhead: dispatch / RPC overhead in seconds.
        compute_cycles: cycles of pure compute (for the activity factor).
        dram_bytes: bytes moved to/from DRAM (for DRAM energy).
        flops: operations executed, after batch padding.
    """

    cycles: float
    fixed: float
    overhead: float
    compute_cycles: float
    dram_bytes: float
    flops: float

    def duration(self, frequency: float) -> float:
        """Seconds at processor ``frequency`` (Hz), alone on its units."""
        return max(self.cycles / frequency, self.fixed) + self.overhead

    def activity(self, frequency: float, stall_activity: float) -> float:
        """Average switching activity in [0, 1] while the kernel runs."""
        total = self.duration(frequency)
        if total <= 0:
            return stall_activity
        busy = min(self.compute_cycles / frequency, total)
        return (busy + stall_activity * (total - busy)) / total


class Unsupported(Exception):
    """The kernel cannot run on the processor (precision or op kind)."""


def miss_ratio(working_set: float, capacity: float) -> float:
    """Capacity-miss ratio of a random-replacement cache: ``max(0, 1 - C/W)``."""
    if working_set <= capacity or working_set <= 0:
        return 0.0
    return 1.0 - capacity / working_set


def lookup(table: dict, precision: str, op: str, pass_: str, default: float = 1.0) -> float:
    """Look an efficiency up: the precision's table first, then the top level;
    within a table ``op.pass``, ``op``, ``category.pass``, ``category``, ``default``."""
    category = OP_KINDS[op].category
    keys = (f"{op}.{pass_}", op, f"{category}.{pass_}", category, "default")
    nested = table.get(precision)
    for source in (nested if isinstance(nested, dict) else None, table):
        if not source:
            continue
        for key in keys:
            value = source.get(key)
            if isinstance(value, (int, float)):
                return float(value)
    return default


@dataclass(frozen=True)
class MemoryLevel:
    """One level as seen by a placement: aggregate capacity and bandwidth."""

    name: str
    capacity: float  # bytes; math.inf for DRAM
    bytes_per_cycle: float | None  # clock-scaled bandwidth, or None
    bandwidth: float | None  # bytes/s, or None


def memory_levels(soc: SocSpec, proc: ProcessorSpec, units: int) -> list[MemoryLevel]:
    """The hierarchy a kernel on ``units`` units of ``proc`` sees, nearest first."""
    levels = []
    for cache in proc.caches:
        mult = units if cache.per_unit else 1
        levels.append(MemoryLevel(
            cache.name, cache.size * mult,
            cache.bytes_per_cycle * mult if cache.bytes_per_cycle else None,
            cache.bandwidth * mult if cache.bandwidth else None))
    for name in proc.shared_memories:
        mem = soc.memory[name]
        bandwidth = mem.bandwidth * mem.efficiency
        capacity = mem.size
        if name == "dram":
            capacity = math.inf
            if proc.dram_bandwidth is not None:
                bandwidth = min(bandwidth, proc.dram_bandwidth)
        levels.append(MemoryLevel(name, capacity, None, bandwidth))
    return levels


class CostModel:
    """Costs of kernels on the processors of one device (pure, cacheable).

    Args:
        soc: the device description.
    """

    def __init__(self, soc: SocSpec):
        self.soc = soc
        self.processors = soc.processors()
        self._levels: dict[tuple[str, int], list[MemoryLevel]] = {}
        # Real traces repeat layer shapes (and iterations repeat whole traces),
        # so costs are memoised by their arguments.
        self._memo: dict[tuple, KernelCost] = {}

    def check_support(self, processor: str, op: str, precision: str) -> None:
        """Raise :class:`Unsupported` if ``processor`` cannot run the kernel."""
        proc = self.processors[processor]
        if precision not in proc.ops_per_cycle:
            raise Unsupported(f"{processor} has no {precision} datapath "
                              f"(supports {', '.join(proc.ops_per_cycle)})")
        if op in proc.unsupported_ops:
            raise Unsupported(f"{processor} does not support op {op!r}")

    def cost(self, processor: str, units: int, *, op: str, pass_: str, precision: str,
             flops: float, bytes_in: float, bytes_out: float, weight_bytes: float,
             batch: int = 0, kernel: int = 0, stride: int = 0) -> KernelCost:
        """Cost of one kernel (sizes in bytes, ``flops`` in operations)."""
        self.check_support(processor, op, precision)
        proc = self.processors[processor]
        units = max(1, min(units, proc.units))
        if proc.batch_padding and batch > proc.batch_padding.above:
            multiple = proc.batch_padding.multiple
            padded = math.ceil(batch / multiple) * multiple
            scale = padded / batch
            flops, bytes_in, bytes_out = flops * scale, bytes_in * scale, bytes_out * scale
        efficiency = lookup(proc.efficiency, precision, op, pass_)
        mem_efficiency = lookup(proc.memory_efficiency, precision, op, pass_)
        scale_units = 1.0 + (units - 1) * proc.parallel_efficiency
        compute_cycles = flops / (proc.ops_per_cycle[precision] * efficiency * scale_units)

        reuse = 1.0
        if OP_KINDS[op].window_reuse and kernel > 0:
            reuse = max(1.0, (kernel / max(stride, 1)) ** 2)
        activations = bytes_in + bytes_out
        footprint = activations + weight_bytes
        accesses = reuse * bytes_in + bytes_out + weight_bytes
        levels = self._levels.get((processor, units))
        if levels is None:
            levels = self._levels[(processor, units)] = memory_levels(self.soc, proc, units)
        clock_cycles, fixed = compute_cycles, 0.0
        served = accesses  # bytes served by the current level
        dram_bytes = 0.0
        for level in levels:
            if level.bytes_per_cycle is not None:
                clock_cycles = max(clock_cycles, served / (level.bytes_per_cycle * mem_efficiency))
            else:
                fixed = max(fixed, served / (level.bandwidth * mem_efficiency))
            if math.isinf(level.capacity):
                dram_bytes = served
                break
            beyond = (weight_bytes + activations * miss_ratio(activations, level.capacity)
                      + (accesses - footprint) * miss_ratio(footprint, level.capacity))
            served = min(served, beyond)
        return KernelCost(cycles=clock_cycles, fixed=fixed, overhead=proc.dispatch_overhead,
                          compute_cycles=compute_cycles, dram_bytes=dram_bytes, flops=flops)

    def kernel_cost(self, processor: str, units: int, row) -> KernelCost:
        """Cost of a trace row (a mapping or a pandas row with the trace columns)."""
        key = (processor, units, row["op"], row["pass"], row["precision"], row["flops"],
               row["bytes_in"], row["bytes_out"], row["weight_bytes"],
               int(_get(row, "batch")), int(_get(row, "kernel")), int(_get(row, "stride")))
        cost = self._memo.get(key)
        if cost is None:
            cost = self._memo[key] = self.cost(
                processor, units, op=key[2], pass_=key[3], precision=key[4], flops=key[5],
                bytes_in=key[6], bytes_out=key[7], weight_bytes=key[8], batch=key[9],
                kernel=key[10], stride=key[11])
        return cost


def _get(row, key: str) -> float:
    try:
        value = row[key]
    except (KeyError, IndexError):
        return 0
    return 0 if value is None or (isinstance(value, float) and math.isnan(value)) else value
