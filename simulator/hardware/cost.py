"""Kernel cost model: how long a kernel takes on a processor, and what it moves.

A hierarchical roofline. A kernel on ``k`` units of a processor needs

* compute: ``flops / (ops_per_cycle[precision] * efficiency[op] * scale(k))``
  cycles, where ``scale(k) = 1 + (k - 1) * parallel_efficiency`` (per
  precision if the processor gives a mapping; ``k = 1`` for the processor's
  ``serial_ops``, single-threaded kernels);
* memory: at every level of its memory hierarchy (private caches, shared
  caches, DRAM), the bytes that missed all nearer levels divided by that
  level's bandwidth. Which level serves the bytes follows from the working set
  against each level's capacity (below), which is what makes a DSP fall off a
  cliff when a batch stops fitting its L2, and what operator linking saves.

The kernel takes ``max(compute, slowest memory level) + dispatch overhead``,
plus the trace's optional ``fixed_s`` (driver or runtime work that takes the
same time anywhere, e.g. preparing a compute graph).
Levels clocked by the processor (``bytes_per_cycle``) scale with DVFS, the
others do not, so the cost is kept as ``cycles`` (divided by the current
frequency at run time), ``fixed`` seconds and ``overhead`` seconds:

    duration(f) = max(cycles / f, fixed) + overhead

Kernel libraries. A kernel placed with a ``library`` (``mnn``) is costed with
that library's table on the processor (``ProcessorSpec.libraries``): its
efficiencies are looked up first and the processor's table fills the keys it
leaves out; its parallel efficiency and dispatch overhead, when given, replace
the processor's. Frameworks differ in kernel quality on the same cores.

Cache traffic. With footprint ``W = bytes_in + bytes_out + weight_bytes`` and
access volume ``R = reuse * bytes_in + bytes_out + weight_bytes`` (``reuse`` =
kernel taps per output, ``(kernel / stride)^2``, for windowed ops), the bytes
that must come from beyond level ``j`` of capacity ``C_j`` are

    M_j = min(M_{j-1}, weight_bytes + A * miss(A, C_j) + (R - W) * miss(W, C_j))

with ``M_0 = R``, ``A = bytes_in + bytes_out`` (activations just written by the
producer stay resident when they fit) and ``miss(x, C) = max(0, 1 - C/x)``,
the capacity-miss ratio of a random-replacement cache. A processor with
``replacement: lru`` has ``miss(x, C) = 1`` for ``x > C`` instead: its kernels
sweep their tensors in order, and under LRU-like replacement a sweep longer than
the level evicts every line before coming back to it. Level ``j`` serves
``M_{j-1}`` bytes. On a processor with ``window_reads_on_chip`` the window
re-reads ``R - W`` stop at the nearest level (the last term is dropped).

Off-chip buffers (optional trace column ``spill``, a fraction). The rule above
keeps activations on chip whenever they fit, as if every level were a cache
of the next. A runtime that keeps the feature maps between operators in
external memory (an operator-centric DSP library writing each output to DDR)
makes ``spill`` of them miss every on-chip level regardless of fit: the
activation term is ``A * max(spill, miss(A, C_j))``. Operator linking keeps a
linked producer's output on chip (its consumer's ``spill`` drops).

Access order (optional trace column ``read_stride``, bytes). A kernel that reads
its input in another order than its producer wrote it (a channel-interleaved
read of a channel-planar feature map) jumps ``s = read_stride`` bytes between
consecutive reads of ``e``-byte elements. Each jump touches a new line of
``L_j`` bytes (``line_size``) of which one element is used now; the rest is used
only if the line survives until the read order comes back to it, i.e. if the
lines of one sweep, ``bytes_in * min(1, k L_j / s)`` bytes (``k`` rows of a
``k x k`` window per map), fit the level (in a
set-associative level, in the sets the stride maps them to: a plane size that
is a multiple of many lines leaves few, :func:`stride_capacity`). So the input
costs, beyond level ``j``, an extra

    bytes_in * (min(s, L_j) / e - 1) * miss(bytes_in * min(1, k L_j / s), C_j)

on top of ``M_j`` (this term is not capped by ``M_{j-1}``: a line fetched for one
element moves more bytes than were asked for). The waste grows with the stride
up to a line; ``read_stride`` 0 (or <= ``e``) is a sequential read and changes
nothing. Operator linking (:mod:`policies.xenos`) makes producers write in their
consumer's order.

Overlap (a library's ``memory_overlap``, default 1). Code whose cache misses
stall an in-order core cannot hide memory time under compute: with overlap
``o`` the kernel takes ``max(c, m) + (1 - o) * min(c, m)`` for compute time ``c``
and memory time ``m`` beyond the nearest level (kept in the clock-scaled/fixed
form above).

Kernel-row loops (a library's ``row_overhead_cycles``, default none). Scalar
code in planar order runs its innermost loop along one kernel row of a
windowed convolution: ``flops / (2 kernel)`` loops per kernel, each costing
those cycles on top of its multiply-accumulates (a 1x1 convolution pays them on
every one, an 11x11 on one in eleven); they spread over the units like compute.

Output blocks (a library's ``output_overhead_macs``, default none). A
register-blocked matrix-product kernel spends, per output, that many
multiply-accumulate slots at the library's rate besides its dot product
(reducing its partial sums, scaling, storing, refilling the software pipeline):
``flops`` grows by ``2 * overhead * outputs`` (``bytes_out`` / element size),
which weighs most on short dot products.

Operand passes (a library's ``gemm_block``, ``b``). A register-blocked
matrix product ``M x K`` by ``K x N`` (from the row: ``outputs = bytes_out /
element``, ``K = flops / (2 outputs)``, ``N = weight_bytes / (element K)``,
``M = outputs / N``) streams its left operand ``A = M K element`` bytes once
per block column, ``ceil(N / b)`` times; beyond the nearest level it costs
``A (ceil(N / b) - 1) miss(A, C_1)`` more bytes (served by the next level, where
the runtime keeps the operand's tile).

Stalling levels (a library's ``stall_levels``): the time of those levels is not
hidden by ``memory_overlap``; it adds to the kernel's time.

Narrow convolutions (``gemm_half_channels``, ``C_h``): a ``conv`` with ``C``
output channels (trace column ``out_channels``) reaches ``C / (C + C_h)`` of
its table efficiency -- the library packs the im2col'd input on every call and
only the output channels amortise it.
It applies to kernels costed with the processor's own table only (a kernel
library's table states its own speed).

Grouped convolutions (``group_half_channels``, ``G_h``): a ``group_conv`` whose
groups have ``C_g`` input channels (``flops / (2 outputs kernel^2)``) reaches
``C_g / (C_g + G_h)`` of its table efficiency -- a direct kernel runs its
innermost loop over one group's input channels, once per output and kernel
tap, and only ``C_g`` multiply-adds amortise the loop. Only with the
processor's own table.

Serial im2col (``im2col_bytes_per_cycle``, ``b``): a ``conv`` with a kernel or
stride above 1 first copies its input patches into a buffer, ``flops / (2 C)``
elements for ``C`` output channels, on one thread: ``flops e / (2 C b)`` cycles
added to the kernel's time whatever the units (not divided by ``scale(k)``;
the other units wait meanwhile). Only with the processor's own table.

Winograd (``winograd_reduction``, ``r``): a processor whose kernel library runs
3x3 stride-1 convolutions with a Winograd algorithm does ``flops / r`` of
arithmetic for them (the transforms are in the efficiency); memory traffic is
unchanged. Like ``gemm_half_channels``, only with the processor's own table.

MAC array (a processor's ``mac_array``, ``PP x ICP x OCP``): a fabric
accelerator computes ``PP`` output positions x ``OCP`` output channels from
``ICP`` input channels per cycle, so a ``conv``, ``deconv``, ``matmul`` or
``fc`` kernel reaches its table efficiency times the fraction of lanes its
dimensions fill (trace columns ``in_channels``, ``out_channels``, ``out_w``,
else ``out_h`` when the map and its input (``in_w``) have one column;
:mod:`.mac_array`), whatever library costs it: the padding is
the hardware's.

SIMD lanes (optional ``simd_waste``): the fraction of vector lanes that do no
useful work (a 3-wide kernel row in 4-wide vectors wastes 1/4); compute
efficiency is multiplied by ``1 - simd_waste``.

Batch padding (a processor's ``batch_padding``): a batch above ``above`` is
padded to a multiple of ``multiple``; its bytes (the working set) grow by
``padded / batch``, and so do its operations unless ``compute`` is false (the
library computes the real images only).

Sharing (``memory_share``, from the placement): a kernel that runs side by side
with sibling kernels of one split (one part per unit) gets that fraction of the
bandwidth of every level that is not private to its units (shared caches,
device memories, DRAM).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..ops import OP_KINDS
from ..spec.soc import ProcessorSpec, SocSpec
from ..trace import BYTES_PER_ELEMENT
from .mac_array import ARRAY_OPS, utilisation

# windowed multiply-accumulate kernels whose scalar loops run along kernel rows
ROW_LOOP_OPS = ("conv", "dwconv", "deconv")
# kernels computed as matrix products (a dot product per output)
GEMM_OPS = ("conv", "deconv", "matmul", "fc", "lstm")
# ... whose left operand is re-streamed per block column (an LSTM's steps are
# matrix-vector products: nothing to block)
BLOCKED_OPS = ("conv", "deconv", "matmul", "fc")


@dataclass(frozen=True)
class KernelCost:
    """Cost of one kernel on one placement.

    Attributes:
        cycles: processor-clock cycles of the clock-scaled part (compute or
            clock-scaled cache traffic, whichever is larger).
        fixed: seconds of the part that does not scale with the processor
            clock (shared caches, DRAM).
        overhead: dispatch / RPC overhead in seconds.
        compute_cycles: cycles each unit spends computing (for the activity factor;
            below the compute time when units scale imperfectly).
        compute_activity: switching activity of those cycles (the processor's
            ``precision_activity`` of the kernel's precision).
        dram_bytes: bytes moved to/from DRAM (for DRAM energy).
        flops: operations executed, after batch padding.
        level_bytes: ``(level name, bytes it served)`` per memory level, nearest
            first (for traffic time series).
        wait_activity: switching activity of the units while they are not
            computing (waiting at barriers, in the per-kernel overhead), when a
            kernel library sets it (a thread pool that spin-waits); None: the
            processor's ``stall_activity``.
    """

    cycles: float
    fixed: float
    overhead: float
    compute_cycles: float
    dram_bytes: float
    flops: float
    level_bytes: tuple[tuple[str, float], ...] = ()
    compute_activity: float = 1.0
    wait_activity: float | None = None

    def duration(self, frequency: float) -> float:
        """Seconds at processor ``frequency`` (Hz), alone on its units."""
        return max(self.cycles / frequency, self.fixed) + self.overhead

    def activity(self, frequency: float, stall_activity: float) -> float:
        """Average switching activity in [0, 1] while the kernel runs."""
        total = self.duration(frequency)
        if self.wait_activity is not None:
            stall_activity = self.wait_activity
        if total <= 0:
            return stall_activity
        busy = min(self.compute_cycles / frequency, total)
        return (busy * self.compute_activity + stall_activity * (total - busy)) / total


class Unsupported(Exception):
    """The kernel cannot run on the processor (precision or op kind)."""


def miss_ratio(working_set: float, capacity: float, replacement: str = "random") -> float:
    """Capacity-miss ratio of a cache: ``max(0, 1 - C/W)`` under random
    replacement; 1 once ``W > C`` under ``lru`` (an in-order sweep)."""
    if working_set <= capacity or working_set <= 0:
        return 0.0
    if replacement == "lru":
        return 1.0
    return 1.0 - capacity / working_set


def lookup(table: dict, precision: str, op: str, pass_: str, default: float = 1.0,
           fallback: dict | None = None) -> float:
    """Look an efficiency up: the precision's table first, then the top level;
    within a table ``op.pass``, ``op`` (then the same for the kind's ``parent``),
    ``category.pass``, ``category``, ``default``.
    Only then ``fallback`` (a processor's own table behind a library's), the same way."""
    kind = OP_KINDS[op]
    names = (op,) if kind.parent is None else (op, kind.parent)
    keys = (*(key for name in names for key in (f"{name}.{pass_}", name)),
            f"{kind.category}.{pass_}", kind.category, "default")
    for current in (table, fallback):
        if not current:
            continue
        nested = current.get(precision)
        for source in (nested if isinstance(nested, dict) else None, current):
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
    line: float = 64.0  # bytes per miss (strided reads)
    shared: bool = False  # not private to the kernel's units (memory_share applies)
    ways: int | None = None  # associativity (None: fully associative)
    copies: int = 1  # units whose private copies make up ``capacity``


def memory_levels(soc: SocSpec, proc: ProcessorSpec, units: int) -> list[MemoryLevel]:
    """The hierarchy a kernel on ``units`` units of ``proc`` sees, nearest first."""
    levels = []
    for cache in proc.caches:
        mult = units if cache.per_unit else 1
        levels.append(MemoryLevel(
            cache.name, cache.size * mult,
            cache.bytes_per_cycle * mult if cache.bytes_per_cycle else None,
            cache.bandwidth * mult if cache.bandwidth else None,
            cache.line_size, not cache.per_unit, cache.ways, mult))
    for name in proc.shared_memories:
        mem = soc.memory[name]
        bandwidth = mem.bandwidth * mem.efficiency
        capacity = mem.size
        if name == "dram":
            capacity = math.inf
            if proc.dram_bandwidth is not None:
                bandwidth = min(bandwidth, proc.dram_bandwidth)
        elif name in proc.memory_bandwidth:
            bandwidth = min(bandwidth, proc.memory_bandwidth[name])
        levels.append(MemoryLevel(name, capacity, None, bandwidth, mem.line_size, True))
    return levels


def stride_capacity(level: MemoryLevel, stride: float) -> float:
    """Bytes of ``level`` that lines read ``stride`` bytes apart can occupy.

    In a set-associative cache, addresses ``stride`` apart fall into only
    ``sets / gcd(stride / line, sets)`` of its sets when the stride is a whole
    number of lines (a power-of-two plane size maps every channel's line to a
    handful of sets); only ``ways`` lines fit per set.
    """
    if level.ways is None or math.isinf(level.capacity):
        return level.capacity
    sets = max(1, round(level.capacity / level.copies / (level.ways * level.line)))
    lines = stride / level.line
    distinct = sets
    if lines >= 1 and abs(lines - round(lines)) < 1e-9:
        distinct = sets // math.gcd(int(round(lines)), sets)
    return min(level.capacity, level.copies * distinct * level.ways * level.line)


class CostModel:
    """Costs of kernels on the processors of one device (pure, cacheable).

    Args:
        soc: the device description.
        slowdown: factor stretching every kernel's time on this device (a slower
            device of the same kind; 1 = as described). Power per busy unit is
            unchanged, so each kernel's energy grows by the same factor.
    """

    def __init__(self, soc: SocSpec, slowdown: float = 1.0):
        self.soc = soc
        # A device-tier proxy (DynO): every kernel of this device takes
        # ``slowdown`` times longer -- compute, memory and overheads alike.
        self.slowdown = slowdown
        self.processors = soc.processors()
        self._levels: dict[tuple[str, int], list[MemoryLevel]] = {}
        # Real traces repeat layer shapes (and iterations repeat whole traces),
        # so costs are memoised by their arguments.
        self._memo: dict[tuple, KernelCost] = {}

    @classmethod
    def shared(cls, soc: SocSpec, slowdown: float = 1.0) -> CostModel:
        """This process's cost model of ``soc`` (the same spec object) at ``slowdown``.

        The runs of a sweep on one SoC then share the memo of kernel costs: a plan
        costs each distinct kernel once per process instead of once per run (~1 ms
        of a 10 ms ResNet-18 inference run). Specs are immutable and a model's only
        state is its memos, so sharing changes no result.
        """
        key = (id(soc), slowdown)
        model = _SHARED.pop(key, None)  # re-inserted below: the dict is in use order
        if model is None or model.soc is not soc:  # an id can be reused once freed
            while len(_SHARED) >= _SHARED_MODELS:
                _SHARED.pop(next(iter(_SHARED)), None)  # the least recently used
            model = cls(soc, slowdown)
        _SHARED[key] = model
        return model

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
             batch: int = 0, kernel: int = 0, stride: int = 0, library: str | None = None,
             fixed_s: float = 0.0, read_stride: float = 0.0, simd_waste: float = 0.0,
             memory_share: float = 1.0, spill: float = 0.0,
             out_channels: int = 0, in_channels: int = 0, out_h: int = 0,
             out_w: int = 0, in_w: int = 0) -> KernelCost:
        """Cost of one kernel (sizes in bytes, ``flops`` in operations, ``fixed_s``
        seconds of processor-independent work; ``library`` picks a kernel-library
        table of the processor, if it has one; ``read_stride`` (bytes),
        ``simd_waste``, ``memory_share`` and ``spill`` as in the
        module docstring;
        ``out_channels`` for the processor's ``gemm_half_channels``, 0 if unknown;
        ``in_channels``, ``out_channels``, ``out_h``, ``out_w``, ``in_w`` for its
        ``mac_array``)."""
        self.check_support(processor, op, precision)
        proc = self.processors[processor]
        lib = proc.libraries.get(library) if library else None
        # a single-threaded kernel uses one unit (and its private caches) whatever it is given
        units = 1 if op in proc.serial_ops else max(1, min(units, proc.units))
        if proc.batch_padding and batch > proc.batch_padding.above:
            multiple = proc.batch_padding.multiple
            padded = math.ceil(batch / multiple) * multiple
            scale = padded / batch
            bytes_in, bytes_out = bytes_in * scale, bytes_out * scale
            if proc.batch_padding.compute:
                flops *= scale
        if lib is not None:
            efficiency = lookup(lib.efficiency, precision, op, pass_, fallback=proc.efficiency)
        else:
            efficiency = lookup(proc.efficiency, precision, op, pass_)
        mem_efficiency = lookup(proc.memory_efficiency, precision, op, pass_)
        parallel = proc.parallel(precision)
        overhead = proc.overhead(op)
        if lib is not None:
            parallel = lib.parallel(precision, parallel)
        if lib is not None and lib.dispatch_overhead is not None:
            overhead = lib.dispatch_overhead
        scale_units = 1.0 + (units - 1) * parallel
        if simd_waste > 0:
            efficiency *= max(1e-6, 1.0 - simd_waste)
        if proc.mac_array is not None and op in ARRAY_OPS:
            efficiency *= utilisation(proc.mac_array, in_channels, out_channels, out_h, out_w,
                                      in_w)
        if (op == "conv" and out_channels > 0 and proc.gemm_half_channels > 0
                and lib is None):
            efficiency *= out_channels / (out_channels + proc.gemm_half_channels)
        element = BYTES_PER_ELEMENT[precision]
        if (op == "group_conv" and proc.group_half_channels > 0 and lib is None
                and kernel > 0 and bytes_out > 0 and flops > 0):
            group_channels = flops * element / (2.0 * bytes_out * kernel * kernel)
            efficiency *= group_channels / (group_channels + proc.group_half_channels)
        work = flops
        if (op == "conv" and kernel == 3 and stride == 1 and proc.winograd_reduction > 1
                and lib is None):
            work = flops / proc.winograd_reduction
        if lib is not None and lib.output_overhead_macs and op in GEMM_OPS:
            work += 2.0 * lib.output_overhead_macs * bytes_out / element
        compute_cycles = work / (proc.ops_per_cycle[precision] * efficiency * scale_units)
        if (lib is not None and lib.row_overhead_cycles and kernel > 0
                and op in ROW_LOOP_OPS):
            compute_cycles += flops / (2.0 * kernel) * lib.row_overhead_cycles / scale_units
        strided = read_stride > element and bytes_in > 0
        # a k x k window keeps k rows of every map in flight during one sweep
        window = max(1, kernel) if OP_KINDS[op].window_reuse else 1

        reuse = 1.0
        if OP_KINDS[op].window_reuse and kernel > 0:
            reuse = max(1.0, (kernel / max(stride, 1)) ** 2)
        activations = bytes_in + bytes_out
        footprint = activations + weight_bytes
        accesses = reuse * bytes_in + bytes_out + weight_bytes
        levels = self._levels.get((processor, units))
        if levels is None:
            levels = self._levels[(processor, units)] = memory_levels(self.soc, proc, units)
        passes = 0.0  # extra bytes of the left operand's re-streaming, beyond level 1
        if (lib is not None and lib.gemm_block and op in BLOCKED_OPS and bytes_out > 0
                and weight_bytes > 0 and flops > 0):
            outputs = bytes_out / element
            depth = flops / (2.0 * outputs)
            columns = max(1.0, weight_bytes / (element * depth))
            operand = outputs / columns * depth * element
            passes = operand * (math.ceil(columns / lib.gemm_block) - 1)
        stalls = set(lib.stall_levels) if lib is not None else set()
        stall_cycles = 0.0
        near_cycles, memory_cycles, fixed = 0.0, 0.0, 0.0
        served = accesses  # bytes served by the current level
        dram_bytes = 0.0
        traffic = []
        law = proc.replacement  # how a working set larger than a level misses it
        for level in levels:
            share = memory_share if level.shared else 1.0
            charged = served
            traffic.append((level.name, charged))
            if level.bytes_per_cycle is not None:
                cycles = charged / (level.bytes_per_cycle * mem_efficiency * share)
                # the nearest level serves every access (loads issue with compute);
                # misses beyond it are what can stall
                if len(traffic) == 1:
                    near_cycles = cycles
                elif level.name in stalls:
                    stall_cycles += cycles
                else:
                    memory_cycles = max(memory_cycles, cycles)
            else:
                fixed = max(fixed, charged / (level.bandwidth * mem_efficiency * share))
            if math.isinf(level.capacity):
                dram_bytes = charged
                break
            beyond = (weight_bytes
                      + activations * max(spill, miss_ratio(activations, level.capacity, law)))
            if not proc.window_reads_on_chip:
                beyond += (accesses - footprint) * miss_ratio(footprint, level.capacity, law)
            served = min(served, beyond)
            if len(traffic) == 1 and passes > 0:
                # the left operand's extra passes, when it does not fit this level
                served += passes * miss_ratio(operand, level.capacity, law)
            if strided:
                sweep = bytes_in * min(1.0, level.line * window / read_stride)
                waste = min(read_stride, level.line) / element - 1.0
                capacity = stride_capacity(level, read_stride)
                served += bytes_in * waste * miss_ratio(sweep, capacity, law)
        busy_cycles = max(compute_cycles, near_cycles)
        clock_cycles = max(busy_cycles, memory_cycles)
        overlap = lib.memory_overlap if lib is not None else None
        if overlap is not None and overlap < 1.0:
            # stalls: the un-hidden part of the shorter side adds to the longer
            clock_cycles += (1.0 - overlap) * min(busy_cycles, memory_cycles)
            overhead += (1.0 - overlap) * fixed
            fixed *= overlap
        clock_cycles += stall_cycles
        if (op == "conv" and proc.im2col_bytes_per_cycle > 0 and lib is None
                and out_channels > 0 and (kernel > 1 or stride > 1)):
            # the im2col copy runs on the calling thread before the parallel product
            clock_cycles += flops * element / (2.0 * out_channels * proc.im2col_bytes_per_cycle)
        slow = self.slowdown
        # Each unit computes only its 1/units of the work; the parallel-efficiency
        # loss is time spent waiting (contention, barriers) at the stall activity.
        active_cycles = compute_cycles * scale_units / units
        return KernelCost(cycles=clock_cycles * slow, fixed=fixed * slow,
                          overhead=(overhead + fixed_s) * slow,
                          compute_cycles=active_cycles * slow, dram_bytes=dram_bytes,
                          flops=flops, level_bytes=tuple(traffic),
                          compute_activity=proc.power.precision_activity.get(precision, 1.0),
                          wait_activity=lib.wait_activity if lib is not None else None)

    def kernel_cost(self, processor: str, units: int, row, library: str | None = None,
                    memory_share: float = 1.0) -> KernelCost:
        """Cost of a trace row (a mapping or a pandas row with the trace columns),
        with ``library``'s table if the processor has one and ``memory_share`` of
        the non-private memory levels' bandwidth."""
        key = (processor, units, row["op"], row["pass"], row["precision"], row["flops"],
               row["bytes_in"], row["bytes_out"], row["weight_bytes"],
               int(_get(row, "batch")), int(_get(row, "kernel")), int(_get(row, "stride")),
               library, float(_get(row, "fixed_s")), float(_get(row, "read_stride")),
               float(_get(row, "simd_waste")), memory_share, float(_get(row, "spill")),
               int(_get(row, "out_channels")), int(_get(row, "in_channels")),
               int(_get(row, "out_h")), int(_get(row, "out_w")), int(_get(row, "in_w")))
        cost = self._memo.get(key)
        if cost is None:
            if len(self._memo) >= _MEMO_COSTS:
                self._memo.clear()  # a bound for a long-lived shared model; plans keep theirs
            cost = self._memo[key] = self.cost(
                processor, units, op=key[2], pass_=key[3], precision=key[4], flops=key[5],
                bytes_in=key[6], bytes_out=key[7], weight_bytes=key[8], batch=key[9],
                kernel=key[10], stride=key[11], library=library, fixed_s=key[13],
                read_stride=key[14], simd_waste=key[15], memory_share=memory_share,
                spill=key[17], out_channels=key[18], in_channels=key[19], out_h=key[20],
                out_w=key[21], in_w=key[22])
        return cost


# Shared cost models (CostModel.shared), the least recently used dropped first: a model
# keeps its spec alive, so an id in the key cannot be reused while its entry is here.
_SHARED: dict[tuple[int, float], CostModel] = {}
_SHARED_MODELS = 16
# Kernel costs a model keeps: ~0.5 kB each, so at most ~30 MB a model and ~0.5 GB for
# all 16 (a sweep's runs meet a few hundred distinct kernels: d-Xenos's 27 runs 365).
_MEMO_COSTS = 65_536


def _get(row, key: str) -> float:
    try:
        value = row[key]
    except (KeyError, IndexError):
        return 0
    return 0 if value is None or (isinstance(value, float) and math.isnan(value)) else value
