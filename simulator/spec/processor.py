"""The processor schema: a CPU cluster, GPU, DSP or NPU of a SoC description.

A processor has OPPs (frequency @ voltage), per-unit peak operations per cycle
and precision, caches, kernel efficiencies (its own and per kernel library),
power coefficients and, for accelerators with their own memory, an offload
channel. See ``docs/socs.md`` for every field and :mod:`simulator.spec.soc` for
the device around it.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from ..ops import CATEGORIES, OP_KINDS, PRECISIONS
from .base import (
    Bytes,
    BytesPerSecond,
    Celsius,
    Farads,
    Fraction,
    Hertz,
    Kelvin,
    Seconds,
    Strict,
    Volts,
    Watts,
)

PROCESSOR_KINDS = ("cpu", "gpu", "dsp", "npu")


class OPP(Strict):
    """One operating performance point: a frequency and the voltage it needs."""

    frequency: Hertz
    voltage: Volts


def _parse_opp(value: object) -> object:
    """Accept ``"2.84 GHz @ 1.0 V"`` as shorthand for ``{frequency, voltage}``."""
    if isinstance(value, str):
        parts = re.split(r"\s*@\s*", value.strip())
        if len(parts) != 2:
            raise ValueError(f"an OPP is written like '2.84 GHz @ 1.0 V'; got {value!r}")
        return {"frequency": parts[0], "voltage": parts[1]}
    return value


class CacheLevel(Strict):
    """A cache or local memory level of a processor, nearest first.

    Attributes:
        name: short name shown in results (``l1``, ``l2``, ``vtcm``).
        size: capacity in bytes (per unit if ``per_unit``).
        per_unit: true for a cache private to each core/context; its capacity
            and bandwidth then add up over the units a kernel uses.
        bytes_per_cycle: bandwidth at the processor clock (per unit if
            ``per_unit``), so it scales with DVFS; or give ``bandwidth``.
        bandwidth: fixed bandwidth in bytes/s (own clock domain).
        line_size: bytes moved per miss (cache line, DMA burst); matters only
            for strided reads (a trace's ``read_stride``), see
            :mod:`simulator.hardware.cost`.
        ways: associativity (None: fully associative); with strided reads whose
            stride maps many lines to few sets, the ways limit what stays.
    """

    name: str
    size: Bytes = Field(gt=0)
    per_unit: bool = True
    bytes_per_cycle: float | None = Field(default=None, gt=0)
    bandwidth: BytesPerSecond | None = Field(default=None, gt=0)
    line_size: Bytes = Field(default=64.0, gt=0)
    ways: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _one_bandwidth(self) -> CacheLevel:
        if (self.bytes_per_cycle is None) == (self.bandwidth is None):
            raise ValueError("give exactly one of bytes_per_cycle or bandwidth")
        return self


class ProcessorPower(Strict):
    """Power model of one processor (per unit = per core / context).

    Dynamic power per busy unit is ``ceff * V^2 * f * activity``, the activity
    being ``precision_activity`` (1 by default) while computing and
    ``stall_activity`` while stalled on memory; static
    leakage per powered unit is ``leakage * (V / V_max) * 2^((T - T_ref)/doubling)``;
    an idle (clock-gated) unit also draws ``idle``.
    """

    ceff: Farads = Field(ge=0, description="effective switched capacitance per unit")
    leakage: Watts = Field(default=0.0, ge=0, description="leakage per unit at V_max, T_ref")
    leakage_reference: Celsius = 25.0
    leakage_doubling: Kelvin = Field(default=25.0, gt=0)
    idle: Watts = Field(default=0.0, ge=0, description="clock-gated idle power per unit")
    stall_activity: Fraction = Field(default=0.5, ge=0, le=1,
                                     description="activity while stalled on memory")
    precision_activity: dict[str, Fraction] = Field(
        default_factory=dict,
        description="activity while computing, by precision (narrow integer lanes "
                    "toggle fewer bits per cycle than FP32 FMAs); missing: 1")
    source: str | None = None

    @field_validator("precision_activity")
    @classmethod
    def _activity_precisions(cls, value: dict[str, float]) -> dict[str, float]:
        for precision, activity in value.items():
            _check_precision(precision)
            if not 0 < activity <= 1:
                raise ValueError(f"precision_activity.{precision} must be in (0, 1]")
        return value


class Offload(Strict):
    """Cost of moving data between the CPU's address space and this processor's.

    A crossing costs ``switch + bytes / bandwidth`` on a channel that carries one
    transfer at a time (FastRPC for the DSP, buffer mapping for the GPU).
    """

    switch: Seconds = Field(ge=0)
    bandwidth: BytesPerSecond = Field(gt=0)
    source: str | None = None


class BatchPadding(Strict):
    """Batch padding of a vendor library: batches above ``above`` are padded up
    to a multiple of ``multiple`` (Hexagon NN: above 4, to a multiple of 32).

    ``compute``: the padded images are computed too (their operations count);
    False: the padding holds buffers (the working set the caches see) but the
    kernels compute the real images only.
    """

    above: int = Field(ge=1)
    multiple: int = Field(ge=1)
    compute: bool = True


class MacArray(Strict):
    """The fixed MAC array of a fabric accelerator: each cycle it computes
    ``pixels`` output positions x ``out_channels`` output channels from
    ``in_channels`` input channels (Xilinx DPU B4096: 8 x 16 x 16, PG338). A
    matrix-product kernel (``conv``, ``deconv``, ``matmul``, ``fc``) whose
    dimensions are not multiples of these pads the rest
    (:mod:`simulator.hardware.mac_array`); its efficiency is multiplied by the
    fraction of lanes it fills."""

    pixels: int = Field(ge=1)
    in_channels: int = Field(ge=1)
    out_channels: int = Field(ge=1)


class LibrarySpec(Strict):
    """How one kernel library (framework backend) performs on a processor.

    Frameworks differ in kernel quality on the same hardware (MNN's training
    kernels are not TFLite's inference kernels). A placement naming a library
    (``Placement(..., library="mnn")``) looks efficiencies up in that library's
    table first, with the usual key order, and falls back to the processor's
    own table for keys the library table does not define; the other fields,
    when given, replace the processor's. A placement naming a library the
    processor has no table for uses the processor's own numbers.

    Attributes:
        efficiency: fraction of peak by op kind, ``op.pass``, category or
            ``default``, nested per precision (as ``ProcessorSpec.efficiency``).
        parallel_efficiency: each extra unit adds this fraction of one unit; a
            mapping gives it per precision (``{fp32: 0.5, int8: 0.8}``; a
            precision left out keeps the processor's).
        dispatch_overhead: fixed cost per kernel (launch, synchronisation).
        graph_setup: time to prepare one operator of a compute graph on this
            processor (allocate its memory, build its op reference; FastRPC
            calls on a DSP). The engine does not charge it by itself: policies
            that model graph preparation read it.
        subgraph_setup: time to prepare one compute graph besides its operators
            (create it, plan and allocate its memory, map its input and output
            buffers: FastRPC session work per CPU<->DSP boundary). Read by
            policies, as ``graph_setup``.
        wait_activity: switching activity of the units while a kernel of this
            library is not computing (its dispatch overhead, the waits of imperfect
            parallel scaling). A thread pool whose workers spin-wait keeps
            executing instructions (MNN's CPU pool); None: the processor's
            ``stall_activity``.
        memory_overlap: fraction of the shorter of a kernel's compute and memory
            time hidden under the longer: 1 (the default roofline) for code that
            prefetches or double-buffers (DMA ping-pong), 0 for code whose cache
            misses stall an in-order core (the two add up).
        row_overhead_cycles: cycles one thread spends entering and leaving the
            innermost loop of a windowed convolution whose loop runs along one
            kernel row (planar scalar code: ``kernel`` taps per loop, so a 1x1
            convolution pays it on every multiply-accumulate): the loop-exit
            branch and the index arithmetic of the next row. None: no such cost
            (vector code along channels, tuned libraries).
        output_overhead_macs: multiply-accumulate slots each output of a
            matrix-product kernel (``conv``, ``deconv``, ``matmul``, ``fc``,
            ``lstm``) costs besides its dot product: a register-blocked GEMM
            sums its partial accumulators, scales and stores every output block
            and refills its software pipeline (TI's C66x ``DSPF_dp_mat_mul_gemm``
            measures 12). Short dot products (1x1 convolutions over few channels)
            pay it most. None: no such cost.
        gemm_block: edge of the square output block a matrix-product kernel
            keeps in registers (TI's C66x SGEMM: 4x4). The kernel streams the
            whole left operand (the im2col'd input) once per block column of
            outputs: when that operand does not fit the nearest level, each
            extra pass comes from the next (``conv``, ``deconv``, ``matmul``,
            ``fc``). None: operands counted once.
        stall_levels: memory levels whose traffic stalls the core whatever
            ``memory_overlap`` says (a C66x's L1D misses served by L2 SRAM:
            DMA double buffering hides only the transfers it makes).
        range_retry: the library's integer operators fuse their requantisation
            and need their output range before they run; when the range is
            found at run time (dynamic rescaling) an operator runs, measures its
            maximum and runs again with it (Hexagon NN's supernode:
            ``needs_retry``, "max too small, recalculating", XiaoMi/nnlib
            ``op_supernode_*.c``). Read by policies that rescale at run time.
        source: where the numbers come from (fitted to what).
    """

    efficiency: dict[str, float | dict[str, float]] = Field(default_factory=dict)
    output_overhead_macs: float | None = Field(default=None, ge=0)
    gemm_block: int | None = Field(default=None, ge=1)
    stall_levels: list[str] = Field(default_factory=list)
    parallel_efficiency: float | dict[str, float] | None = None
    dispatch_overhead: Seconds | None = Field(default=None, ge=0)
    graph_setup: Seconds | None = Field(default=None, ge=0)
    subgraph_setup: Seconds | None = Field(default=None, ge=0)
    memory_overlap: Fraction | None = Field(default=None, ge=0, le=1)
    wait_activity: Fraction | None = Field(default=None, ge=0, le=1)
    row_overhead_cycles: float | None = Field(default=None, ge=0)
    range_retry: bool = False
    source: str | None = None

    @field_validator("efficiency")
    @classmethod
    def _efficiency_keys(cls, value: dict) -> dict:
        return ProcessorSpec._efficiency_keys(value)

    @field_validator("parallel_efficiency")
    @classmethod
    def _parallel(cls, value):
        entries = value.items() if isinstance(value, dict) else [("", value)]
        for precision, fraction in entries:
            if precision and precision not in PRECISIONS:
                raise ValueError(f"unknown precision {precision!r}; expected "
                                 f"{', '.join(PRECISIONS)}")
            if fraction is not None and not 0 < fraction <= 1:
                raise ValueError(f"parallel efficiency must be in (0, 1]; got {fraction!r}")
        return value

    def parallel(self, precision: str, default: float) -> float:
        """The parallel efficiency for ``precision`` (``default`` when not given)."""
        value = self.parallel_efficiency
        if isinstance(value, dict):
            return value.get(precision, default)
        return default if value is None else value


class ProcessorSpec(Strict):
    """A processor: a CPU cluster, a GPU, a DSP or an NPU.

    Attributes:
        kind: cpu | gpu | dsp | npu.
        core: the core or IP name (``cortex-a77``, ``adreno-650``, ``hexagon-698``).
        units: cores of a cluster, HVX contexts of a DSP, 1 for a GPU.
        opps: OPP table, ascending frequencies.
        min_frequency: the OS floor (cpufreq ``scaling_min_freq``) no governor
            goes below, as a phone's vendor kernel sets it; None: the lowest OPP.
        ops_per_cycle: peak operations per cycle per unit by precision (2 per MAC);
            a missing precision is unsupported on this processor.
        efficiency: fraction of peak reached per op kind; keys are op kinds,
            ``op.pass`` (``conv.bwd_weight``), categories (``elementwise``) or
            ``default``; nested under a precision name to override for it.
        memory_efficiency: fraction of each bandwidth reached, same keys.
        parallel_efficiency: each extra unit adds this fraction of one unit; a
            mapping gives it per precision (``{fp32: 0.73, int8: 0.5}``: TFLite's
            INT8 kernels scale worse with threads than its FP32 ones); a
            precision left out gets 1.
        serial_ops: op kinds whose kernels run on one unit whatever the
            placement gives them (a framework's single-threaded kernel: TFLite
            runs grouped convolutions with its reference kernel).
        gemm_half_channels: output channels at which a convolution lowered to
            a matrix product (op ``conv``, with the trace's ``out_channels``)
            reaches half its table efficiency: ``efficiency * C / (C + this)``.
            The kernel library packs the (im2col'd) input for every call, a
            cost per input element that the output channels amortise (ruy in
            TFLite); 0 (default): no such cost.
        group_half_channels: input channels per group at which a grouped
            convolution (op ``group_conv``) reaches half its table efficiency:
            ``efficiency * C_g / (C_g + this)``. A direct (reference) kernel
            loops over the ``C_g`` input channels of a group innermost, once per
            output and kernel tap, so the loop's fixed cost is amortised over
            ``C_g`` multiply-adds (TFLite's ``reference_ops::Conv``); 0
            (default): no such cost.
        im2col_bytes_per_cycle: the kernel library lowers every ``conv`` with a
            kernel or stride above 1 to a matrix product by first copying its
            input patches into a buffer (im2col: ``flops / (2 out_channels)``
            elements) on the calling thread alone, at this many bytes per
            processor cycle, before the multi-threaded product (TFLite's
            ``optimized_ops::Conv``); the copy does not shrink with threads. 0
            (default): no such copy.
        winograd_reduction: the kernel library runs 3x3 stride-1 convolutions
            (op ``conv``) with a Winograd algorithm that needs this many times
            fewer multiplications than the direct count the traces hold (Lavin &
            Gray, CVPR'16: F(2x2,3x3) 2.25x, F(4x4,3x3) 4x); 1 (default): direct.
        mac_array: a fixed MAC array (:class:`MacArray`) whose padded lanes
            lower the efficiency of matrix-product kernels whose dimensions
            are not multiples of its parallelism; None: no such padding.
        window_reads_on_chip: the ``(k/s)^2 - 1`` re-reads of a sliding window
            (convolutions, pooling) are served by the nearest level, whatever
            the tensor's size (a GPU's texture cache keeps the few input rows a
            window needs); False: by the level that holds the whole working set.
        dispatch_overhead: fixed cost per kernel launch / RPC call.
        op_overhead: the fixed cost per kernel of some op kinds or categories
            instead of ``dispatch_overhead`` (an op kind before its category):
            ``{elementwise: 0 us}`` where the fitted per-operator cost already
            holds the element-wise work the calibration traces leave out.
        caches: private or processor-shared cache levels, nearest first.
        shared_memories: names of device memories reached next, nearest first
            (the last must be ``dram``).
        dram_bandwidth: cap on this processor's own DRAM path.
        memory_bandwidth: caps on this processor's own path to other shared
            memories, by name (``{slc: 1 GB/s}``: a DSP reaches the system cache
            through its own, slower port).
        replacement: how a working set that exceeds a cache level misses it:
            ``random`` (default) ``1 - C/W`` of the accesses (random replacement,
            accesses spread over the working set); ``lru``: all of them (kernels
            that sweep their tensors in order, under LRU-like replacement, evict
            every line before the sweep comes back to it).
        unsupported_ops: op kinds this processor cannot run.
        batch_padding: batch padding rule of its kernel library.
        offload: present when the processor has its own address space.
        memory_budget: memory available to kernels on this processor.
        thermal_node: RC node its heat goes to.
        power: its power model.
        libraries: per kernel library (``mnn``, ``tflite``), how its kernels
            perform here (:class:`LibrarySpec`).
    """

    kind: str
    core: str = ""
    units: int = Field(default=1, ge=1)
    opps: list[OPP] = Field(min_length=1)
    min_frequency: Hertz | None = Field(default=None, gt=0)
    ops_per_cycle: dict[str, float]
    efficiency: dict[str, float | dict[str, float]] = Field(default_factory=dict)
    memory_efficiency: dict[str, float | dict[str, float]] = Field(default_factory=dict)
    parallel_efficiency: Fraction | dict[str, Fraction] = Field(default=1.0)
    serial_ops: list[str] = Field(default_factory=list)
    gemm_half_channels: float = Field(default=0.0, ge=0)
    group_half_channels: float = Field(default=0.0, ge=0)
    im2col_bytes_per_cycle: float = Field(default=0.0, ge=0)
    winograd_reduction: float = Field(default=1.0, ge=1)
    mac_array: MacArray | None = None
    window_reads_on_chip: bool = False
    dispatch_overhead: Seconds = Field(default=0.0, ge=0)
    op_overhead: dict[str, Seconds] = Field(default_factory=dict)
    caches: list[CacheLevel] = Field(default_factory=list)
    shared_memories: list[str] = Field(default_factory=lambda: ["dram"])
    dram_bandwidth: BytesPerSecond | None = Field(default=None, gt=0)
    memory_bandwidth: dict[str, BytesPerSecond] = Field(default_factory=dict)
    replacement: Literal["random", "lru"] = "random"
    unsupported_ops: list[str] = Field(default_factory=list)
    batch_padding: BatchPadding | None = None
    offload: Offload | None = None
    memory_budget: Bytes | None = Field(default=None, gt=0)
    thermal_node: str
    power: ProcessorPower
    libraries: dict[str, LibrarySpec] = Field(default_factory=dict)
    source: str | None = None

    @field_validator("kind")
    @classmethod
    def _kind(cls, value: str) -> str:
        if value not in PROCESSOR_KINDS:
            raise ValueError(f"kind must be one of {', '.join(PROCESSOR_KINDS)}")
        return value

    @field_validator("opps", mode="before")
    @classmethod
    def _opps(cls, value: object) -> object:
        return [_parse_opp(v) for v in value] if isinstance(value, list) else value

    @field_validator("opps")
    @classmethod
    def _ascending(cls, value: list[OPP]) -> list[OPP]:
        for opp in value:
            if opp.frequency <= 0 or opp.voltage <= 0:
                raise ValueError("OPP frequencies and voltages must be positive")
        freqs = [opp.frequency for opp in value]
        if freqs != sorted(freqs) or len(set(freqs)) != len(freqs):
            raise ValueError("OPP frequencies must be strictly ascending")
        return value

    @field_validator("min_frequency")
    @classmethod
    def _floor_within_opps(cls, value: float | None, info: ValidationInfo) -> float | None:
        opps = info.data.get("opps")
        if value is not None and opps and value > opps[-1].frequency * (1 + 1e-9):
            raise ValueError(f"{value / 1e6:g} MHz is above the highest OPP "
                             f"({opps[-1].frequency / 1e6:g} MHz)")
        return value

    @field_validator("ops_per_cycle")
    @classmethod
    def _precisions(cls, value: dict[str, float]) -> dict[str, float]:
        for precision, ops in value.items():
            _check_precision(precision)
            if ops <= 0:
                raise ValueError(f"ops_per_cycle.{precision} must be positive")
        if not value:
            raise ValueError("at least one precision is needed")
        return value

    @field_validator("efficiency", "memory_efficiency")
    @classmethod
    def _efficiency_keys(cls, value: dict) -> dict:
        for key, entry in value.items():
            if isinstance(entry, dict):
                if key not in PRECISIONS:
                    raise ValueError(f"nested table {key!r} must be a precision "
                                     f"({', '.join(PRECISIONS)})")
                for sub_key, sub in entry.items():
                    _check_efficiency_entry(f"{key}.{sub_key}", sub_key, sub)
            else:
                _check_efficiency_entry(key, key, entry)
        return value

    @field_validator("parallel_efficiency")
    @classmethod
    def _parallel(cls, value):
        entries = value.items() if isinstance(value, dict) else [("", value)]
        for precision, fraction in entries:
            if precision:
                _check_precision(precision)
            if not 0 < fraction <= 1:
                raise ValueError(f"parallel efficiency must be in (0, 1]; got {fraction!r}")
        return value

    def parallel(self, precision: str) -> float:
        """The parallel efficiency of ``precision`` kernels (1 if a mapping leaves it out)."""
        value = self.parallel_efficiency
        return float(value.get(precision, 1.0)) if isinstance(value, dict) else float(value)

    @field_validator("op_overhead")
    @classmethod
    def _overhead_keys(cls, value: dict[str, float]) -> dict[str, float]:
        for key, seconds in value.items():
            if key not in OP_KINDS and key not in CATEGORIES:
                raise ValueError(f"unknown op kind or category {key!r}")
            if seconds < 0:
                raise ValueError(f"op_overhead.{key} must be >= 0")
        return value

    def overhead(self, op: str) -> float:
        """Seconds of fixed cost per ``op`` kernel (``op_overhead``, else ``dispatch_overhead``)."""
        for key in (op, OP_KINDS[op].category):
            if key in self.op_overhead:
                return self.op_overhead[key]
        return self.dispatch_overhead

    @field_validator("unsupported_ops", "serial_ops")
    @classmethod
    def _ops_known(cls, value: list[str]) -> list[str]:
        for op in value:
            if op not in OP_KINDS:
                raise ValueError(f"unknown op kind {op!r}")
        return value

    @field_validator("shared_memories")
    @classmethod
    def _ends_in_dram(cls, value: list[str]) -> list[str]:
        if not value or value[-1] != "dram":
            raise ValueError("the last shared memory must be 'dram'")
        return value

    @model_validator(mode="after")
    def _stall_levels_exist(self) -> ProcessorSpec:
        levels = [c.name for c in self.caches] + list(self.shared_memories)
        for name, lib in self.libraries.items():
            for level in lib.stall_levels:
                if level not in levels:
                    raise ValueError(f"libraries.{name}.stall_levels: no memory level "
                                     f"{level!r} (has {', '.join(levels)})")
        return self

    @model_validator(mode="after")
    def _capped_memories_reached(self) -> ProcessorSpec:
        for name in self.memory_bandwidth:
            if name == "dram":
                raise ValueError("memory_bandwidth: cap dram with dram_bandwidth")
            if name not in self.shared_memories:
                raise ValueError(f"memory_bandwidth.{name}: not one of shared_memories "
                                 f"({', '.join(self.shared_memories)})")
        return self


def _check_precision(precision: str) -> None:
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; expected {', '.join(PRECISIONS)}")


def _check_efficiency_entry(label: str, key: str, value: object) -> None:
    from ..ops import CATEGORIES, PASSES

    op, _, pass_ = key.partition(".")
    if op != "default" and op not in OP_KINDS and op not in CATEGORIES:
        raise ValueError(f"efficiency key {label!r}: unknown op kind or category {op!r}")
    if pass_ and pass_ not in PASSES:
        raise ValueError(f"efficiency key {label!r}: unknown pass {pass_!r}")
    if not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise ValueError(f"efficiency {label!r} must be in (0, 1]; got {value!r}")
